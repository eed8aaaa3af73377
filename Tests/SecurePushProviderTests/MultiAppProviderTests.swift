import Foundation
import SecurePushCore
import SecurePushFakes
import SecurePushProviders
import Testing
import _CryptoExtras

/// Several apps per deployment: FCM (one service account per Firebase project) and WNS (one app identity per
/// package), chosen per device by its `project` / `app` option, against fakes that, like the platforms,
/// refuse a token or credential of the wrong app.
@Suite("Several apps per platform")
struct MultiAppProviderTests {
    static func account(_ project: String, key: _RSA.Signing.PrivateKey, tokenURI: String) -> FCMServiceAccount {
        FCMServiceAccount(
            clientEmail: "pusher@\(project).iam.gserviceaccount.com", projectID: project, tokenURI: tokenURI, privateKeyID: nil, privateKey: key)
    }

    /// Sends `push` and expects it refused with `.failed(reason)` before anything went out: `sentRequests`
    /// (what the fake has received) does not change.
    static func expectRefusedUnsent(
        _ push: Push, by provider: some PushProvider, reason: String, sentRequests: () -> Int, _ comment: Comment,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let before = sentRequests()
        let result = await provider.send(push)
        #expect(result == .failed(reason: reason), sourceLocation: sourceLocation)
        #expect(sentRequests() == before, comment, sourceLocation: sourceLocation)
    }

    @Test("FCM: the device's project option chooses the service account; the first serves devices without it")
    func fcmProjects() async throws {
        let fake = try await FakeFCMServer.start(accounts: [
            .init(projectID: "bank-app", clientEmail: "pusher@bank-app.iam.gserviceaccount.com", publicKey: FCMFixture.key.publicKey),
            // One key for both accounts keeps the test quick (RSA key generation is slow); the fake tells the
            // accounts apart by their email, and binds each access token to its project.
            .init(projectID: "bank-pro", clientEmail: "pusher@bank-pro.iam.gserviceaccount.com", publicKey: FCMFixture.key.publicKey),
        ])
        try await withShutdown(of: fake) {
            try await TestSupport.withHTTPClient { client in
                let configuration = FCMConfiguration(
                    serviceAccounts: [
                        Self.account("bank-app", key: FCMFixture.key, tokenURI: fake.tokenURI),
                        Self.account("bank-pro", key: FCMFixture.key, tokenURI: fake.tokenURI),
                    ],
                    baseURL: fake.baseURL, caFile: fake.caFile)
                let provider = try FCMProvider(configuration: configuration, httpClient: client, logger: TestSupport.logger)
                let appToken = "fcm-app-" + UUID().uuidString.lowercased()
                let proToken = "fcm-pro-" + UUID().uuidString.lowercased()
                fake.bind(token: appToken, toProject: "bank-app")
                fake.bind(token: proToken, toProject: "bank-pro")

                #expect(await provider.send(TestSupport.push(token: appToken, platform: .fcm)).kind == "sent")
                #expect(await provider.send(TestSupport.push(token: proToken, platform: .fcm, options: ["project": "bank-pro"])).kind == "sent")
                #expect(fake.delivered.map(\.path) == ["/v1/projects/bank-app/messages:send", "/v1/projects/bank-pro/messages:send"])
                #expect(fake.issuedAccessTokens == 2, "one access token per project")
                #expect(await provider.accessTokenFetches == 2)

                // Without its option the pro app's token goes through the default project, which FCM refuses.
                let mismatch = await provider.send(TestSupport.push(token: proToken, platform: .fcm))
                #expect(mismatch.kind == "tokenInvalid")
                #expect(mismatch.reason.contains("SENDER_ID_MISMATCH"))

                await Self.expectRefusedUnsent(
                    TestSupport.push(token: appToken, platform: .fcm, options: ["project": "bank-test"]), by: provider,
                    reason: "FCM project not configured", sentRequests: { fake.requests.count }, "nothing is sent for an unconfigured project")
            }
        }
    }

    @Test("FCM: two service accounts for one project, or none, are refused")
    func fcmDuplicateProject() async throws {
        try await TestSupport.withHTTPClient { client in
            let account = Self.account("bank-app", key: FCMFixture.key, tokenURI: "https://oauth2.googleapis.com/token")
            #expect(throws: FCMServiceAccountError.self) {
                try FCMProvider(configuration: FCMConfiguration(serviceAccounts: [account, account]), httpClient: client, logger: TestSupport.logger)
            }
            #expect(throws: FCMServiceAccountError.self) {
                try FCMProvider(configuration: FCMConfiguration(serviceAccounts: []), httpClient: client, logger: TestSupport.logger)
            }
        }
    }

    @Test("WNS: the device's app option chooses the app identity; the first serves devices without it")
    func wnsApps() async throws {
        let fake = try await FakeWNSServer.start(clients: [("ms-app://s-1-15-2-bank", "bank-secret"), ("ms-app://s-1-15-2-pro", "pro-secret")])
        try await withShutdown(of: fake) {
            try await TestSupport.withClients { client, pinned in
                let configuration = WNSConfiguration(
                    apps: [
                        .init(clientID: "ms-app://s-1-15-2-bank", clientSecret: "bank-secret", tokenURL: fake.tokenURL),
                        .init(
                            name: "Contoso.BankPro_8wekyb3d8bbwe", clientID: "ms-app://s-1-15-2-pro", clientSecret: "pro-secret",
                            tokenURL: fake.tokenURL),
                    ],
                    allowedHostSuffixes: ["127.0.0.1"], allowedPrivateNetworks: TestSupport.loopback, caFile: fake.caFile)
                let provider = try WNSProvider(configuration: configuration, httpClient: client, pinnedClients: pinned, logger: TestSupport.logger)
                let bankChannel = fake.makeChannelURI(for: "ms-app://s-1-15-2-bank")
                let proChannel = fake.makeChannelURI(for: "ms-app://s-1-15-2-pro")
                let pro = ["app": "Contoso.BankPro_8wekyb3d8bbwe"]

                #expect(await provider.send(TestSupport.push(token: bankChannel, platform: .wns)).kind == "sent")
                #expect(await provider.send(TestSupport.push(token: proChannel, platform: .wns, options: pro)).kind == "sent")
                #expect(fake.delivered.count == 2)
                #expect(fake.issuedAccessTokens == 2, "one access token per app")
                #expect(await provider.accessTokenFetches == 2)

                // Without its option the pro app's channel gets the default app's token, which WNS refuses.
                let wrongApp = await provider.send(TestSupport.push(token: proChannel, platform: .wns))
                #expect(wrongApp == .failed(reason: "WNS 403"))

                await Self.expectRefusedUnsent(
                    TestSupport.push(token: bankChannel, platform: .wns, options: ["app": "Contoso.Other"]), by: provider,
                    reason: "WNS app not configured", sentRequests: { fake.requests.count }, "nothing is sent for an unconfigured app")
            }
        }
    }

    @Test("WNS: two apps with one name, or no app, are refused")
    func wnsDuplicateApp() async throws {
        try await TestSupport.withClients { client, pinned in
            let app = WNSConfiguration.App(name: "Contoso.Bank", clientID: "a", clientSecret: "s")
            #expect(throws: WNSProviderError.self) {
                try WNSProvider(
                    configuration: WNSConfiguration(apps: [app, app]), httpClient: client, pinnedClients: pinned, logger: TestSupport.logger)
            }
            #expect(throws: WNSProviderError.self) {
                try WNSProvider(configuration: WNSConfiguration(apps: []), httpClient: client, pinnedClients: pinned, logger: TestSupport.logger)
            }
        }
    }
}
