import Foundation
import SecurePushCore
import SecurePushProviders
import SecurePushStore

extension ProviderSettings {
    static func fcm(_ values: ConfigurationValues, envelopes: EnvelopeSettings) throws -> FCMConfiguration {
        let tokenURL = values.string("SECUREPUSH_FCM_TOKEN_URL")
        if let tokenURL, !tokenURL.lowercased().hasPrefix("https://") {
            throw ConfigurationError("SECUREPUSH_FCM_TOKEN_URL must be an https URL")
        }
        var accounts: [FCMServiceAccount] = []
        let files = values.string("SECUREPUSH_FCM_SERVICE_ACCOUNT_FILES")
        if files == nil || values.string("SECUREPUSH_FCM_SERVICE_ACCOUNT_FILE") != nil {
            let path = try required(
                values, "SECUREPUSH_FCM_SERVICE_ACCOUNT_FILE",
                hint: "path to the service-account JSON key file; several Firebase projects: SECUREPUSH_FCM_SERVICE_ACCOUNT_FILES")
            accounts.append(try serviceAccount(path: path, setting: "SECUREPUSH_FCM_SERVICE_ACCOUNT_FILE"))
        }
        if let files {
            for path in list(files) {
                accounts.append(try serviceAccount(path: path, setting: "SECUREPUSH_FCM_SERVICE_ACCOUNT_FILES"))
            }
        }
        var projects: Set<String> = []
        for account in accounts where !projects.insert(account.projectID).inserted {
            throw ConfigurationError(
                "SECUREPUSH_FCM_SERVICE_ACCOUNT_FILE/SECUREPUSH_FCM_SERVICE_ACCOUNT_FILES give two keys for Firebase project \"\(account.projectID)\"; list one service account per project"
            )
        }
        if let tokenURL {
            for index in accounts.indices { accounts[index].tokenURI = tokenURL }
        }
        return FCMConfiguration(
            serviceAccounts: accounts,
            baseURL: try baseURL(values, "SECUREPUSH_FCM_URL", default: FCMConfiguration.defaultBaseURL),
            caFile: try caFile(values, "SECUREPUSH_FCM_CA_FILE"),
            requestTimeout: try values.duration("SECUREPUSH_FCM_TIMEOUT", default: .seconds(10), in: timeoutRange),
            envelopes: envelopes
        )
    }

    static func serviceAccount(path: String, setting: String) throws -> FCMServiceAccount {
        let json = try readFile(path, setting: setting)
        do {
            return try FCMServiceAccount(json: Data(json.utf8))
        } catch {
            throw ConfigurationError("\(setting): \(path): \(error)")
        }
    }
}
