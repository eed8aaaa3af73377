import Foundation
import SecurePushCore
import SecurePushFakes
import SecurePushProviders
import SecurePushServer
import Testing
import _CryptoExtras

/// Start-up validation of several FCM projects (`SECUREPUSH_FCM_SERVICE_ACCOUNT_FILES`) and several WNS apps
/// (`SECUREPUSH_WNS_APPS`), as for APNs's `SECUREPUSH_APNS_APPS`.
@Suite("Several apps per platform: settings")
struct MultiAppSettingsTests {
    static func accountFile(project: String) throws -> String {
        let json = try JSONSerialization.data(withJSONObject: [
            "type": "service_account", "project_id": project, "private_key": FCMFixture.key.pkcs8PEMRepresentation,
            "client_email": "pusher@\(project).iam.gserviceaccount.com", "token_uri": "https://oauth2.googleapis.com/token",
        ])
        return try TestSupport.temporaryFile(String(decoding: json, as: UTF8.self), suffix: ".json")
    }

    @Test("FCM: one key file per Firebase project; the single file (or the first listed) serves devices without a project option")
    func fcmProjects() throws {
        let (one, two, three) = (
            try Self.accountFile(project: "bank-app"), try Self.accountFile(project: "bank-pro"), try Self.accountFile(project: "bank-biz")
        )
        let both = try #require(
            try ProviderSettingsTests.configuration([
                "SECUREPUSH_PROVIDERS": "fcm", "SECUREPUSH_FCM_SERVICE_ACCOUNT_FILE": one,
                "SECUREPUSH_FCM_SERVICE_ACCOUNT_FILES": "\(two), \(three)", "SECUREPUSH_FCM_TOKEN_URL": "https://127.0.0.1:9/token",
            ]).providerSettings.fcm)
        #expect(both.serviceAccounts.map(\.projectID) == ["bank-app", "bank-pro", "bank-biz"])
        #expect(both.serviceAccounts.allSatisfy { $0.tokenURI == "https://127.0.0.1:9/token" })
        #expect(both.envelope.defaultProject == "bank-app")

        let listOnly = try #require(
            try ProviderSettingsTests.configuration(["SECUREPUSH_PROVIDERS": "fcm", "SECUREPUSH_FCM_SERVICE_ACCOUNT_FILES": "\(two),\(one)"])
                .providerSettings.fcm)
        #expect(listOnly.serviceAccounts.map(\.projectID) == ["bank-pro", "bank-app"])
        #expect(listOnly.envelope.defaultProject == "bank-pro")
    }

    @Test("FCM: a project given twice, an unreadable or broken key file in the list, is a start-up error naming the setting")
    func fcmErrors() throws {
        let one = try Self.accountFile(project: "bank-app")
        let again = try Self.accountFile(project: "bank-app")
        let duplicate = ProviderSettingsTests.message([
            "SECUREPUSH_PROVIDERS": "fcm", "SECUREPUSH_FCM_SERVICE_ACCOUNT_FILE": one, "SECUREPUSH_FCM_SERVICE_ACCOUNT_FILES": again,
        ])
        #expect(duplicate?.contains("give two keys for Firebase project \"bank-app\"") == true, "\(duplicate ?? "no error")")
        #expect(
            ProviderSettingsTests.message(["SECUREPUSH_PROVIDERS": "fcm", "SECUREPUSH_FCM_SERVICE_ACCOUNT_FILES": "\(one),/nonexistent/key.json"])
                == "SECUREPUSH_FCM_SERVICE_ACCOUNT_FILES: cannot read /nonexistent/key.json")
        let broken = try TestSupport.temporaryFile(
            #"{"project_id":"p","private_key":"-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----"}"#)
        let message = ProviderSettingsTests.message(["SECUREPUSH_PROVIDERS": "fcm", "SECUREPUSH_FCM_SERVICE_ACCOUNT_FILES": broken])
        #expect(message == "SECUREPUSH_FCM_SERVICE_ACCOUNT_FILES: \(broken): FCM service account key has a private_key that is not an RSA PEM key")
        #expect(message?.contains("c2VjcmV0") == false)
        #expect(ProviderSettingsTests.message(["SECUREPUSH_PROVIDERS": "fcm"])?.contains("SECUREPUSH_FCM_SERVICE_ACCOUNT_FILES") == true)
    }

    @Test("WNS: named apps from credential files, beside or instead of the single client id")
    func wnsApps() throws {
        let pro = try FakeCredentials.wnsApp(clientID: "ms-app://s-1-15-2-pro", secret: "pro-secret")
        let biz = try FakeCredentials.wnsApp(
            clientID: "biz-client", secret: "biz-secret", tokenURL: "https://login.microsoftonline.com/t/oauth2/v2.0/token")
        let both = try #require(
            try ProviderSettingsTests.configuration([
                "SECUREPUSH_PROVIDERS": "wns", "SECUREPUSH_WNS_CLIENT_ID": "ms-app://s-1-15-2-bank", "SECUREPUSH_WNS_CLIENT_SECRET": "bank-secret",
                "SECUREPUSH_WNS_APPS": "Contoso.BankPro_8wekyb3d8bbwe:\(pro), Contoso.Biz:\(biz)",
                "SECUREPUSH_WNS_SCOPE": "https://wns.windows.com/.default",
            ]).providerSettings.wns)
        #expect(both.apps.map(\.name) == [nil, "Contoso.BankPro_8wekyb3d8bbwe", "Contoso.Biz"])
        #expect(both.apps.map(\.clientID) == ["ms-app://s-1-15-2-bank", "ms-app://s-1-15-2-pro", "biz-client"])
        #expect(both.apps.map(\.clientSecret) == ["bank-secret", "pro-secret", "biz-secret"])
        #expect(
            both.apps.map(\.tokenURL) == [
                WNSConfiguration.defaultTokenURL, WNSConfiguration.defaultTokenURL, "https://login.microsoftonline.com/t/oauth2/v2.0/token",
            ])
        #expect(both.apps.allSatisfy { $0.scope == "https://wns.windows.com/.default" })

        let listOnly = try #require(
            try ProviderSettingsTests.configuration(["SECUREPUSH_PROVIDERS": "wns", "SECUREPUSH_WNS_APPS": "Contoso.Biz:\(biz)"]).providerSettings.wns
        )
        #expect(listOnly.apps.map(\.name) == ["Contoso.Biz"])
    }

    @Test("WNS: malformed entries, unusable credential files and duplicate names stop start-up, never echoing a secret")
    func wnsErrors() throws {
        let good = try FakeCredentials.wnsApp(clientID: "c", secret: "top-secret-value")
        func message(_ apps: String) -> String {
            ProviderSettingsTests.message(["SECUREPUSH_PROVIDERS": "wns", "SECUREPUSH_WNS_APPS": apps]) ?? "no error"
        }
        #expect(message(good).hasPrefix("SECUREPUSH_WNS_APPS entries must look like app-name:/path/to/credentials.json"))
        #expect(message("-bad:\(good)").hasPrefix("SECUREPUSH_WNS_APPS entries must look like"))
        #expect(message("Contoso App:\(good)").hasPrefix("SECUREPUSH_WNS_APPS entries must look like"))
        #expect(message("Contoso:/nonexistent/app.json") == "SECUREPUSH_WNS_APPS: cannot read /nonexistent/app.json")
        #expect(message("A:\(good),A:\(good)") == "SECUREPUSH_WNS_APPS lists the app \"A\" twice")
        let cases: [(String, String)] = [
            ("[1]", "is not a JSON object"),
            (#"{"client_id":"c"}"#, "needs client_id and client_secret"),
            (#"{"client_id":"c","client_secret":""}"#, "has a client_secret that is not a non-empty string"),
            (#"{"client_id":"c","client_secret":"top-secret-value","tenant":"t"}"#, "has unknown field(s) tenant"),
            (
                #"{"client_id":"c","client_secret":"top-secret-value","token_url":"http://login.example/token"}"#,
                "has a token_url that is not an https URL"
            ),
        ]
        for (json, problem) in cases {
            let file = try TestSupport.temporaryFile(json, suffix: ".json")
            let text = message("Contoso:\(file)")
            #expect(text == "SECUREPUSH_WNS_APPS: \(file) (app Contoso) \(problem)", "\(json)")
            #expect(!text.contains("top-secret-value"))
        }
    }
}
