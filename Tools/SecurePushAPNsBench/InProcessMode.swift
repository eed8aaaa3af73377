import Crypto
import Foundation
import SecurePushFakes

/// Fake and provider in one process (the original measurement).
enum InProcessMode {
    static func run(pushes: Int, inFlight: Int) async throws {
        let key = P256.Signing.PrivateKey()
        let fake = try await FakeAPNsServer.start(
            keys: [.init(teamID: ProviderLoad.teamID, keyID: ProviderLoad.keyID, publicKey: key.publicKey)], keepsRequests: false)
        let (sent, seconds) = try await ProviderLoad(baseURL: fake.baseURL, caFile: fake.caFile, key: key).run(pushes: pushes, inFlight: inFlight)
        let accepted = fake.deliveredCount - 1
        print(
            "pushes sent: \(sent) of \(pushes), accepted by fake: \(accepted) in flight: \(inFlight) connections: \(fake.server.acceptedConnections)")
        print(
            String(
                format: "apns pushes_per_s=%.0f connections=%d accepted=%d in_flight=%d", Double(accepted) / seconds, fake.server.acceptedConnections,
                accepted, inFlight))
        await fake.shutdown()
    }
}
