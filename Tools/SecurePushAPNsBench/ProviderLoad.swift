import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import SecurePushCore
import SecurePushProviders
import SecurePushRelayProtocol

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

    /// A relay to push through instead of the fake APNs (`--relay URL --installation ID --installation-key FILE`):
    /// the self-hosted side's `RelayProvider` and `RelayClient`, as a dispatcher has them.
    var relay: (url: String, installation: UUID, key: InstallationKey)?
    /// The relay client's requests in flight at most (`--relay-requests`).
    var relayRequests = 8

    /// Runs `body` with the provider (the APNs provider, or the relay's) and its HTTP client.
    func withProvider<T>(_ body: (any PushProvider, RelayClient?) async throws -> T) async throws -> T {
        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.redirectConfiguration = .disallow
        clientConfiguration.tracing.tracer = nil  // as ProviderFactory.httpClientConfiguration
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        var logger = Logger(label: "securepush.bench")
        logger.logLevel = .error
        do {
            let result: T
            if let relay {
                let relayClient = RelayClient(
                    url: relay.url, installation: relay.installation, key: relay.key, httpClient: client, maxRequests: relayRequests, logger: logger)
                let provider = RelayProvider(platform: .apns, client: relayClient) { _, _ in false }
                let running = Task { try await relayClient.run() }
                do {
                    result = try await body(provider, relayClient)
                } catch {
                    running.cancel()
                    throw error
                }
                running.cancel()
                _ = try? await running.value
            } else {
                let provider = try APNsProvider(
                    configuration: APNsConfiguration(
                        apps: [.init(topic: Self.topic, teamID: Self.teamID, keyID: Self.keyID, key: key)],
                        productionBaseURL: baseURL, sandboxBaseURL: baseURL, caFile: caFile),
                    httpClient: client, logger: logger)
                result = try await body(provider, nil)
            }
            try await client.shutdown().get()
            return result
        } catch {
            try? await client.shutdown().get()
            throw error
        }
    }

    /// Registers the tokens of `pushes` with the relay (1,000 a request), as the self-hosted server's sync does.
    static func register(_ pushes: [Push], with relay: RelayClient?) async throws {
        guard let relay else { return }
        for start in stride(from: 0, to: pushes.count, by: RelayTokenChanges.maxTokens) {
            let tokens = pushes[start..<min(pushes.count, start + RelayTokenChanges.maxTokens)].map {
                RelayToken(platform: "apns", token: $0.target.token)
            }
            try await relay.changeTokens(RelayTokenChanges(bind: tokens))
        }
    }

    /// Sends pushes at `rate` a second for `seconds`, one at a time each; returns each send's milliseconds.
    func paced(rate: Int, seconds: Int) async throws -> [Double] {
        try await withProvider { provider, relay in
            let warmUp = Self.push()
            let load = (0..<(rate * seconds)).map { _ in Self.push() }
            try await Self.register([warmUp] + load, with: relay)
            guard case .sent = await provider.send(warmUp) else { throw BenchError("the warm-up push was not accepted") }
            let clock = ContinuousClock()
            let start = clock.now
            return await withTaskGroup(of: Double.self) { group in
                for (index, push) in load.enumerated() {
                    let due = start + .nanoseconds(Int64(index) * 1_000_000_000 / Int64(rate))
                    if clock.now < due { try? await Task.sleep(until: due, clock: clock) }
                    group.addTask {
                        let sent = clock.now
                        _ = await provider.send(push)
                        let took = clock.now - sent
                        return Double(took.components.seconds) * 1000 + Double(took.components.attoseconds) / 1e15
                    }
                }
                var durations: [Double] = []
                for await duration in group { durations.append(duration) }
                return durations
            }
        }
    }

    /// Sends one push to connect and authenticate, then the load. Returns the pushes the provider
    /// reported sent and the seconds the load took.
    func run(pushes: Int, inFlight: Int) async throws -> (sent: Int, seconds: Double) {
        try await withProvider { provider, relay in
            let warmUp = Self.push()
            // The pushes exist before the clock starts, as h2load's one request does: the figure is the provider's.
            let load = (0..<pushes).map { _ in sealed ? Self.sealedPush() : Self.push() }
            try await Self.register([warmUp] + load, with: relay)
            guard case .sent = await provider.send(warmUp) else { throw BenchError("the warm-up push was not accepted") }
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
            return (sent, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
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
