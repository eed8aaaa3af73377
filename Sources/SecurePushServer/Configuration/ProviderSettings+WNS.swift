import Foundation
import SecurePushCore
import SecurePushProviders
import SecurePushStore

extension ProviderSettings {
    static func wns(_ values: ConfigurationValues, policy: PushEndpointPolicy) throws -> WNSConfiguration {
        let tokenURL = try baseURL(values, "SECUREPUSH_WNS_TOKEN_URL", default: WNSConfiguration.defaultTokenURL)
        let scope = values.string("SECUREPUSH_WNS_SCOPE") ?? WNSConfiguration.defaultScope
        var apps: [WNSConfiguration.App] = []
        let entries = values.string("SECUREPUSH_WNS_APPS")
        if entries == nil || values.string("SECUREPUSH_WNS_CLIENT_ID") != nil {
            let clientID = try required(
                values, "SECUREPUSH_WNS_CLIENT_ID", hint: "the app's package SID or Entra application (client) id; several apps: SECUREPUSH_WNS_APPS")
            let secret: String
            if let file = values.string("SECUREPUSH_WNS_CLIENT_SECRET_FILE") {
                secret = try readFile(file, setting: "SECUREPUSH_WNS_CLIENT_SECRET_FILE").trimmingCharacters(in: .whitespacesAndNewlines)
                guard !secret.isEmpty else { throw ConfigurationError("SECUREPUSH_WNS_CLIENT_SECRET_FILE: \(file) is empty") }
            } else {
                secret = try required(values, "SECUREPUSH_WNS_CLIENT_SECRET", hint: "the client secret (or SECUREPUSH_WNS_CLIENT_SECRET_FILE)")
            }
            apps.append(WNSConfiguration.App(clientID: clientID, clientSecret: secret, tokenURL: tokenURL, scope: scope))
        }
        if let entries {
            for entry in list(entries) {
                apps.append(try wnsApp(entry, tokenURL: tokenURL, scope: scope))
            }
        }
        var names: Set<String> = []
        for name in apps.compactMap(\.name) where !names.insert(name).inserted {
            throw ConfigurationError("SECUREPUSH_WNS_APPS lists the app \"\(name)\" twice")
        }
        return WNSConfiguration(
            apps: apps,
            allowedHostSuffixes: policy.allowedHosts,
            allowedPrivateNetworks: policy.allowedPrivateNetworks,
            caFile: try caFile(values, "SECUREPUSH_WNS_CA_FILE"),
            requestTimeout: try values.duration("SECUREPUSH_WNS_TIMEOUT", default: .seconds(10), in: timeoutRange)
        )
    }

    /// One `SECUREPUSH_WNS_APPS` entry, `<app>:/path/to/credentials.json`: the name devices give in their
    /// `app` option, and a JSON file `{"client_id", "client_secret", "token_url"?, "scope"?}` (token URL and
    /// scope default to `SECUREPUSH_WNS_TOKEN_URL` and `SECUREPUSH_WNS_SCOPE`).
    static func wnsApp(_ entry: String, tokenURL defaultTokenURL: String, scope defaultScope: String) throws -> WNSConfiguration.App {
        let setting = "SECUREPUSH_WNS_APPS"
        let parts = entry.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2, !parts[1].isEmpty, isAppName(parts[0]) else {
            throw ConfigurationError(
                "\(setting) entries must look like app-name:/path/to/credentials.json with an app name of letters, digits, '.', '_' and '-' (such as the package family name), got \"\(entry)\""
            )
        }
        let (name, path) = (parts[0], parts[1])
        let text = try readFile(path, setting: setting)
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else {
            throw ConfigurationError("\(setting): \(path) (app \(name)) is not a JSON object")
        }
        func field(_ key: String) throws -> String? {
            guard let value = object[key] else { return nil }
            guard let string = value as? String, !string.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ConfigurationError("\(setting): \(path) (app \(name)) has a \(key) that is not a non-empty string")
            }
            return string
        }
        let unknown = Set(object.keys).subtracting(["client_id", "client_secret", "token_url", "scope"])
        guard unknown.isEmpty else {
            throw ConfigurationError("\(setting): \(path) (app \(name)) has unknown field(s) \(unknown.sorted().joined(separator: ", "))")
        }
        guard let clientID = try field("client_id"), let secret = try field("client_secret") else {
            throw ConfigurationError("\(setting): \(path) (app \(name)) needs client_id and client_secret")
        }
        var tokenURL = defaultTokenURL
        if let override = try field("token_url") {
            guard let url = URL(string: override), url.scheme?.lowercased() == "https", url.host != nil else {
                throw ConfigurationError("\(setting): \(path) (app \(name)) has a token_url that is not an https URL")
            }
            tokenURL = override
        }
        return WNSConfiguration.App(
            name: name, clientID: clientID, clientSecret: secret, tokenURL: tokenURL, scope: try field("scope") ?? defaultScope)
    }

    /// Whether `name` can name a WNS app: letters, digits, `.`, `_` and `-`, starting with a letter or digit,
    /// at most 256 characters (a package family name such as `Contoso.Chat_8wekyb3d8bbwe` fits).
    static func isAppName(_ name: String) -> Bool {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        guard let first = name.first, first.isASCII, first.isLetter || first.isNumber, name.utf8.count <= 256 else { return false }
        return name.allSatisfy(allowed.contains)
    }
}
