import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import SecurePushCore
import SecurePushProviders

/// SecurePush's APNs provider sending `pushes` pushes with `inFlight` outstanding, to one base URL.
struct ProviderLoad {
    static let teamID = "BENCHTEAM1"
    static let keyID = "BENCHKEY01"
    static let topic = "com.example.bench"

    var baseURL: String
    var caFile: String
    var key: P256.Signing.PrivateKey
    /// Whether every push carries a preview sealed to a device key (`SECUREPUSH_SEALED_PREVIEWS=on`): the
    /// sealing (one P-256 key agreement and an AES-GCM seal per push) is part of the measured send.
    var sealed = false

    /// Sends one push to connect and authenticate, then the load. Returns the pushes the provider
    /// reported sent and the seconds the load took.
    func run(pushes: Int, inFlight: Int) async throws -> (sent: Int, seconds: Double) {
        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.redirectConfiguration = .disallow
        clientConfiguration.tracing.tracer = nil  // as ProviderFactory.httpClientConfiguration
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        var logger = Logger(label: "securepush.bench")
        logger.logLevel = .error
        do {
            let provider = try APNsProvider(
                configuration: APNsConfiguration(
                    apps: [.init(topic: Self.topic, teamID: Self.teamID, keyID: Self.keyID, key: key)],
                    productionBaseURL: baseURL, sandboxBaseURL: baseURL, caFile: caFile),
                httpClient: client, logger: logger)
            guard case .sent = await provider.send(Self.push()) else { throw BenchError("the warm-up push was not accepted") }
            // The pushes exist before the clock starts, as h2load's one request does: the figure is the provider's.
            let load = (0..<pushes).map { _ in sealed ? Self.sealedPush() : Self.push() }
            let clock = ContinuousClock()
            let start = clock.now
            let sent = await withTaskGroup(of: Int.self) { group in
                for worker in 0..<min(inFlight, pushes) {
                    group.addTask {
                        var ok = 0
                        for index in stride(from: worker, to: load.count, by: inFlight) {
                            if case .sent = await provider.send(load[index]) { ok += 1 }
                        }
                        return ok
                    }
                }
                var sum = 0
                for await ok in group { sum += ok }
                return sum
            }
            let elapsed = clock.now - start
            try await client.shutdown().get()
            return (sent, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        } catch {
            try? await client.shutdown().get()
            throw error
        }
    }

    /// A push whose preview is sealed to a fresh device key, as the claim hands it over with the switch on.
    static func sealedPush() -> Push {
        var push = push()
        let device = P256.KeyAgreement.PrivateKey().publicKey.x963Representation
        let auth = Data((0..<16).map { _ in UInt8.random(in: 0...255) })
        push.seal = PushSeal(
            previewJSON: #"{"body": "12.40 at Bakery", "title": "Card payment"}"#, key: SealingPublicKey(publicKey: device, authSecret: auth))
        return push
    }

    static func push() -> Push {
        let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        return Push(
            notificationID: NotificationID(UUID()), target: PushTarget(deviceID: UUID(), platform: .apns, token: token),
            expiresAt: Date().addingTimeInterval(3600))
    }
}
