import Crypto
import Foundation
import SecurePushCore
import SecurePushFakes
import SecurePushProviders
import SecurePushServer
import SecurePushTestSupport
import Testing
import _CryptoExtras

@Suite("Provider settings from the environment")
struct ProviderSettingsTests {
    static let base = ["DATABASE_URL": "postgres://u:p@127.0.0.1:5432/securepush"]

    static func configuration(_ extra: [String: String]) throws -> SecurePushConfiguration {
        try SecurePushConfiguration(environment: base.merging(extra) { $1 })
    }

    static func message(_ extra: [String: String]) -> String? {
        do {
            _ = try configuration(extra)
            return nil
        } catch {
            return "\(error)"
        }
    }

    static func apnsEnvironment(keyFile: String) -> [String: String] {
        [
            "SECUREPUSH_PROVIDERS": "apns",
            "SECUREPUSH_APNS_KEY_FILE": keyFile,
            "SECUREPUSH_APNS_KEY_ID": "KEY1234567",
            "SECUREPUSH_APNS_TEAM_ID": "TEAM123456",
            "SECUREPUSH_APNS_TOPIC": "com.example.one, com.example.two",
        ]
    }

    @Test("platforms not listed are not read; simulated needs nothing")
    func onlyListedPlatforms() throws {
        let configuration = try Self.configuration(["SECUREPUSH_PROVIDERS": "simulated"])
        #expect(configuration.providerSettings.apns == nil)
        #expect(configuration.providerSettings.fcm == nil)
    }

    @Test("APNs: each missing or unusable credential names its setting")
    func apnsErrors() throws {
        #expect(Self.message(["SECUREPUSH_PROVIDERS": "apns"])?.hasPrefix("SECUREPUSH_APNS_KEY_FILE is not set") == true)
        var environment = Self.apnsEnvironment(keyFile: "/nonexistent/AuthKey.p8")
        #expect(Self.message(environment) == "SECUREPUSH_APNS_KEY_FILE: cannot read /nonexistent/AuthKey.p8")
        let garbage = try TestSupport.temporaryFile("-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----\n")
        environment = Self.apnsEnvironment(keyFile: garbage)
        let message = try #require(Self.message(environment))
        #expect(message.hasPrefix("SECUREPUSH_APNS_KEY_FILE:"))
        #expect(!message.contains("c2VjcmV0"))
        let key = try TestSupport.temporaryFile(P256.Signing.PrivateKey().pemRepresentation)
        environment = Self.apnsEnvironment(keyFile: key)
        environment["SECUREPUSH_APNS_TEAM_ID"] = nil
        #expect(Self.message(environment)?.hasPrefix("SECUREPUSH_APNS_TEAM_ID is not set") == true)
        environment = Self.apnsEnvironment(keyFile: key)
        environment["SECUREPUSH_APNS_TOKEN_LIFETIME"] = "70m"
        #expect(Self.message(environment)?.hasPrefix("SECUREPUSH_APNS_TOKEN_LIFETIME must be a duration") == true)
        environment["SECUREPUSH_APNS_TOKEN_LIFETIME"] = "10m"
        #expect(Self.message(environment)?.hasPrefix("SECUREPUSH_APNS_TOKEN_LIFETIME must be a duration") == true)
        environment = Self.apnsEnvironment(keyFile: key)
        environment["SECUREPUSH_APNS_PRODUCTION_URL"] = "http://127.0.0.1:1"
        #expect(Self.message(environment)?.hasPrefix("SECUREPUSH_APNS_PRODUCTION_URL must be an https URL") == true)
        environment = Self.apnsEnvironment(keyFile: key)
        environment["SECUREPUSH_APNS_APPS"] = "com.other.app:OTHERTEAM1"
        #expect(Self.message(environment)?.hasPrefix("SECUREPUSH_APNS_APPS entries must look like") == true)
    }

    @Test("APNs: several apps, several teams, overrides")
    func apnsApps() throws {
        let key = try TestSupport.temporaryFile(P256.Signing.PrivateKey().pemRepresentation)
        let other = try TestSupport.temporaryFile(P256.Signing.PrivateKey().pemRepresentation)
        var environment = Self.apnsEnvironment(keyFile: key)
        environment["SECUREPUSH_APNS_APPS"] = "com.other.app:OTHERTEAM1:OTHERKEY01:\(other)"
        environment["SECUREPUSH_APNS_PRODUCTION_URL"] = "https://127.0.0.1:9443/"
        environment["SECUREPUSH_APNS_TOKEN_LIFETIME"] = "30m"
        environment["SECUREPUSH_APNS_PUSH_STYLE"] = "silent"
        let apns = try #require(try Self.configuration(environment).providerSettings.apns)
        #expect(apns.apps.map(\.topic) == ["com.example.one", "com.example.two", "com.other.app"])
        #expect(apns.apps.map(\.teamID) == ["TEAM123456", "TEAM123456", "OTHERTEAM1"])
        #expect(apns.productionBaseURL == "https://127.0.0.1:9443")
        #expect(apns.sandboxBaseURL == APNsConfiguration.sandboxURL)
        #expect(apns.tokenLifetime == .seconds(1800))
        #expect(apns.envelope.settings.apnsStyle == .silent)
        #expect(apns.envelope.defaultTopic == "com.example.one")
        environment["SECUREPUSH_APNS_APPS"] = "com.example.two:OTHERTEAM1:OTHERKEY01:\(other)"
        #expect(Self.message(environment)?.contains("list a bundle id twice") == true)
    }

    @Test("FCM and Web Push credentials are required and checked")
    func otherPlatforms() throws {
        #expect(Self.message(["SECUREPUSH_PROVIDERS": "fcm"])?.hasPrefix("SECUREPUSH_FCM_SERVICE_ACCOUNT_FILE is not set") == true)
        let brokenAccount = try TestSupport.temporaryFile(#"{"project_id":"p"}"#)
        #expect(
            Self.message(["SECUREPUSH_PROVIDERS": "fcm", "SECUREPUSH_FCM_SERVICE_ACCOUNT_FILE": brokenAccount])
                == "SECUREPUSH_FCM_SERVICE_ACCOUNT_FILE: \(brokenAccount): FCM service account key has no private_key")
        let account = try TestSupport.temporaryFile(
            String(decoding: try FCMFixture.serviceAccountJSON(tokenURI: "https://oauth2.googleapis.com/token"), as: UTF8.self))
        let fcm = try #require(
            try Self.configuration(["SECUREPUSH_PROVIDERS": "fcm", "SECUREPUSH_FCM_SERVICE_ACCOUNT_FILE": account]).providerSettings.fcm)
        #expect(fcm.serviceAccounts.map(\.projectID) == [FCMFixture.projectID])
        #expect(fcm.baseURL == FCMConfiguration.defaultBaseURL)

        #expect(Self.message(["SECUREPUSH_PROVIDERS": "webpush"])?.hasPrefix("SECUREPUSH_WEBPUSH_VAPID_KEY_FILE is not set") == true)
        let raw = try TestSupport.temporaryFile(P256.Signing.PrivateKey().rawRepresentation.fakeBase64URL + "\n")
        #expect(
            Self.message(["SECUREPUSH_PROVIDERS": "webpush", "SECUREPUSH_WEBPUSH_VAPID_KEY_FILE": raw])?.hasPrefix(
                "SECUREPUSH_WEBPUSH_SUBJECT is not set") == true)
        #expect(
            Self.message([
                "SECUREPUSH_PROVIDERS": "webpush", "SECUREPUSH_WEBPUSH_VAPID_KEY_FILE": raw, "SECUREPUSH_WEBPUSH_SUBJECT": "ops@example.com",
            ])?
            .hasPrefix("SECUREPUSH_WEBPUSH_SUBJECT must be a mailto: or https: URI") == true)
        let pem = try TestSupport.temporaryFile(P256.Signing.PrivateKey().pemRepresentation)
        var webPush = [
            "SECUREPUSH_PROVIDERS": "webpush", "SECUREPUSH_WEBPUSH_VAPID_KEY_FILE": pem, "SECUREPUSH_WEBPUSH_SUBJECT": "mailto:ops@example.com",
        ]
        #expect(Self.message(webPush)?.hasPrefix("SECUREPUSH_WEBPUSH_NAVIGATE_URL is not set") == true)
        webPush["SECUREPUSH_WEBPUSH_NAVIGATE_URL"] = "https://app.example.com/n/{id}"
        #expect(try Self.configuration(webPush).providerSettings.webPush?.envelope.navigateURL == "https://app.example.com/n/{id}")

        // A key made the way docs/providers.md says (openssl ecparam ... -noout: SEC1 "EC PRIVATE KEY").
        let openSSLKey = FileManager.default.temporaryDirectory.appendingPathComponent("vapid-\(UUID().uuidString).pem").path
        try Shell.run("/usr/bin/openssl", ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", openSSLKey])
        #expect(
            try Self.configuration([
                "SECUREPUSH_PROVIDERS": "webpush", "SECUREPUSH_WEBPUSH_VAPID_KEY_FILE": openSSLKey,
                "SECUREPUSH_WEBPUSH_SUBJECT": "mailto:ops@example.com", "SECUREPUSH_WEBPUSH_NAVIGATE_URL": "https://app.example.com/",
            ])
            .providerSettings.webPush != nil)
    }

    @Test("ProviderFactory builds real providers from the environment, and the APNs one delivers to the fake")
    func factoryEndToEnd() async throws {
        let key = P256.Signing.PrivateKey()
        let fake = try await FakeAPNsServer.start(keys: [.init(teamID: "TEAM123456", keyID: "KEY1234567", publicKey: key.publicKey)])
        let keyFile = try TestSupport.temporaryFile(key.pemRepresentation)
        let account = try TestSupport.temporaryFile(
            String(decoding: try FCMFixture.serviceAccountJSON(tokenURI: "https://oauth2.googleapis.com/token"), as: UTF8.self))
        var environment = Self.apnsEnvironment(keyFile: keyFile)
        environment["SECUREPUSH_PROVIDERS"] = "simulated,apns,fcm,webpush,wns"
        environment["SECUREPUSH_APNS_PRODUCTION_URL"] = fake.baseURL
        environment["SECUREPUSH_APNS_SANDBOX_URL"] = fake.baseURL
        environment["SECUREPUSH_APNS_CA_FILE"] = fake.caFile
        environment["SECUREPUSH_FCM_SERVICE_ACCOUNT_FILE"] = account
        environment["SECUREPUSH_WEBPUSH_VAPID_KEY_FILE"] = keyFile
        environment["SECUREPUSH_WEBPUSH_SUBJECT"] = "https://example.com/contact"
        environment["SECUREPUSH_WEBPUSH_NAVIGATE_URL"] = "https://example.com/inbox"
        environment["SECUREPUSH_WNS_CLIENT_ID"] = "c"
        environment["SECUREPUSH_WNS_CLIENT_SECRET"] = "s"
        let configuration = try Self.configuration(environment)
        try await TestSupport.withClients { client, pinned in
            let providers = try ProviderFactory.makeProviders(configuration, httpClient: client, pinnedClients: pinned, logger: TestSupport.logger)
            #expect(providers.map(\.platform) == [.simulated, .apns, .fcm, .webpush, .wns])
            let apns = try #require(providers.first { $0.platform == .apns })
            #expect(await apns.send(TestSupport.push(token: "abcd", options: ["topic": "com.example.two"])).kind == "sent")
            #expect(fake.delivered.first?.header("apns-topic") == "com.example.two")
        }
        await fake.shutdown()
    }

    @Test("every real platform, configured only through SECUREPUSH_* settings, delivers to its fake")
    func allPlatformsFromEnvironment() async throws {
        try await FakePushServices.with { fakes in
            var environment = fakes.settings
            environment["SECUREPUSH_PROVIDERS"] = FakePushServices.providersSetting
            let configuration = try Self.configuration(environment)
            try await TestSupport.withClients { client, pinned in
                let providers = try ProviderFactory.makeProviders(
                    configuration, httpClient: client, pinnedClients: pinned, logger: TestSupport.logger)
                #expect(providers.map(\.platform) == FakePushServices.realPlatforms)
                for provider in providers {
                    let device = try #require(fakes.device(provider.platform))
                    let result = await provider.send(TestSupport.push(token: device.token, platform: provider.platform, options: device.options))
                    #expect(result.kind == "sent", "\(provider.platform): \(result)")
                    #expect(fakes.accepted(provider.platform).count == 1, "\(provider.platform)")
                }
            }
        }
    }
}

@Suite("Endpoint allowlists from the environment")
struct EndpointSettingsTests {
    @Test("read whichever platforms are enabled, so an API-only process checks registrations without credentials")
    func readWithoutProviders() throws {
        let defaults = try ProviderSettingsTests.configuration(["SECUREPUSH_PROVIDERS": ""]).providerSettings.endpointPolicies
        #expect(defaults.webPush.allowedHosts == ["fcm.googleapis.com", "push.services.mozilla.com", "push.apple.com", "notify.windows.com"])
        #expect(defaults.wns.allowedHosts == ["notify.windows.com"])
        #expect(defaults.webPush.allowedPrivateNetworks.isEmpty)

        let configured = try ProviderSettingsTests.configuration([
            "SECUREPUSH_PROVIDERS": "simulated", "SECUREPUSH_WEBPUSH_ALLOWED_HOSTS": "ntfy.example.org, *.up.example.org",
            "SECUREPUSH_WNS_ALLOWED_HOSTS": "notify.windows.com,wns.example.test",
            "SECUREPUSH_PUSH_ALLOWED_PRIVATE_NETWORKS": "10.8.0.0/16, fd00::/8",
        ]).providerSettings.endpointPolicies
        #expect(configured.webPush.allowedHosts == ["ntfy.example.org", "up.example.org"])
        #expect(configured.wns.allowedHosts == ["notify.windows.com", "wns.example.test"])
        #expect(configured.webPush.allowedPrivateNetworks == [IPNetwork("10.8.0.0/16")!, IPNetwork("fd00::/8")!])
        #expect(configured.wns.allowedPrivateNetworks == configured.webPush.allowedPrivateNetworks)
    }

    @Test("the providers get the same policies")
    func providersShareThePolicies() throws {
        let wns = try #require(
            try ProviderSettingsTests.configuration([
                "SECUREPUSH_PROVIDERS": "wns", "SECUREPUSH_WNS_CLIENT_ID": "c", "SECUREPUSH_WNS_CLIENT_SECRET": "s",
                "SECUREPUSH_WNS_ALLOWED_HOSTS": "wns.example.test", "SECUREPUSH_PUSH_ALLOWED_PRIVATE_NETWORKS": "10.0.0.0/8",
            ]).providerSettings.wns)
        #expect(wns.endpointPolicy.allowedHosts == ["wns.example.test"])
        #expect(wns.endpointPolicy.allowedPrivateNetworks == [IPNetwork("10.0.0.0/8")!])
    }

    @Test("bad values stop start-up with a message naming the setting")
    func badValues() {
        let cases: [([String: String], String)] = [
            (["SECUREPUSH_PUSH_ALLOWED_PRIVATE_NETWORKS": "10.0.0.1/8"], "SECUREPUSH_PUSH_ALLOWED_PRIVATE_NETWORKS lists \"10.0.0.1/8\""),
            (["SECUREPUSH_PUSH_ALLOWED_PRIVATE_NETWORKS": "ten"], "SECUREPUSH_PUSH_ALLOWED_PRIVATE_NETWORKS lists \"ten\""),
            (
                ["SECUREPUSH_WEBPUSH_ALLOWED_HOSTS": "https://push.example.com/"],
                "SECUREPUSH_WEBPUSH_ALLOWED_HOSTS lists \"https://push.example.com/\""
            ),
            (["SECUREPUSH_WNS_ALLOWED_HOSTS": " , "], "SECUREPUSH_WNS_ALLOWED_HOSTS must list at least one host"),
        ]
        for (environment, prefix) in cases {
            let message = ProviderSettingsTests.message(environment.merging(["SECUREPUSH_PROVIDERS": ""]) { $1 })
            #expect(message?.hasPrefix(prefix) == true, "\(message ?? "no error")")
        }
    }
}
