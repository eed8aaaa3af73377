import AsyncHTTPClient
import Crypto
import Foundation
import SecurePushCore
import SecurePushFakes
import SecurePushProviders

/// A fake APNs server and a provider pointed at it.
struct APNsFixture {
    static let topic = "com.example.securepush"
    static let teamID = "TEAM123456"
    static let keyID = "KEY1234567"

    let fake: FakeAPNsServer
    let provider: APNsProvider
    let key: P256.Signing.PrivateKey

    /// Starts a fake and a provider (one app), runs `body`, and cleans up.
    static func with<T>(
        requestTimeout: Duration = .seconds(10),
        style: PushStyle = .alert,
        alert: GenericAlert = GenericAlert(),
        extraApps: [APNsConfiguration.App] = [],
        _ body: (APNsFixture) async throws -> T
    ) async throws -> T {
        let key = P256.Signing.PrivateKey()
        let keys =
            [FakeAPNsServer.SigningKey(teamID: teamID, keyID: keyID, publicKey: key.publicKey)]
            + extraApps.map { FakeAPNsServer.SigningKey(teamID: $0.teamID, keyID: $0.keyID, publicKey: $0.key.publicKey) }
        let fake = try await FakeAPNsServer.start(keys: keys)
        return try await withShutdown(of: fake) {
            try await run(
                fake: fake, key: key, requestTimeout: requestTimeout, envelopes: EnvelopeSettings(alert: alert, apnsStyle: style),
                extraApps: extraApps, body)
        }
    }

    private static func run<T>(
        fake: FakeAPNsServer, key: P256.Signing.PrivateKey, requestTimeout: Duration, envelopes: EnvelopeSettings,
        extraApps: [APNsConfiguration.App], _ body: (APNsFixture) async throws -> T
    ) async throws -> T {
        try await TestSupport.withHTTPClient { client in
            let configuration = APNsConfiguration(
                apps: [try APNsConfiguration.App(topic: topic, teamID: teamID, keyID: keyID, p8PEM: key.pemRepresentation)] + extraApps,
                productionBaseURL: fake.baseURL,
                sandboxBaseURL: fake.baseURL,
                caFile: fake.caFile,
                requestTimeout: requestTimeout,
                envelopes: envelopes
            )
            let provider = try APNsProvider(configuration: configuration, httpClient: client, logger: TestSupport.logger)
            return try await body(APNsFixture(fake: fake, provider: provider, key: key))
        }
    }
}
