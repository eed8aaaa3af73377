// Measures pushes per second through the APNs provider to the local fake APNs over one HTTP/2
// connection (TLS on 127.0.0.1). Usage: securepush-apns-bench [pushes=5000] [concurrency=100]
// The fake runs in the same process and shares the CPU, so the number is a lower bound for the
// client side, not a prediction of Apple's throughput.
import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import SecurePushCore
import SecurePushFakes
import SecurePushProviders

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let total = arguments.first ?? 5000
let concurrency = arguments.dropFirst().first ?? 100

let key = P256.Signing.PrivateKey()
let fake = try await FakeAPNsServer.start(keys: [.init(teamID: "BENCHTEAM1", keyID: "BENCHKEY01", publicKey: key.publicKey)])
var clientConfiguration = HTTPClient.Configuration()
clientConfiguration.redirectConfiguration = .disallow
let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
var logger = Logger(label: "securepush.bench")
logger.logLevel = .error
let provider = try APNsProvider(
    configuration: APNsConfiguration(
        apps: [.init(topic: "com.example.bench", teamID: "BENCHTEAM1", keyID: "BENCHKEY01", key: key)],
        productionBaseURL: fake.baseURL, sandboxBaseURL: fake.baseURL, caFile: fake.caFile),
    httpClient: client, logger: logger)

func push() -> Push {
    let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    return Push(
        notificationID: NotificationID(UUID()), target: PushTarget(deviceID: UUID(), platform: .apns, token: token),
        expiresAt: Date().addingTimeInterval(3600))
}

_ = await provider.send(push())  // connect, authenticate, warm up
let clock = ContinuousClock()
let start = clock.now
let sent = await withTaskGroup(of: Int.self) { group in
    let perWorker = total / concurrency
    for worker in 0..<concurrency {
        let count = perWorker + (worker < total % concurrency ? 1 : 0)
        group.addTask {
            var ok = 0
            for _ in 0..<count {
                if case .sent = await provider.send(push()) { ok += 1 }
            }
            return ok
        }
    }
    var sum = 0
    for await ok in group { sum += ok }
    return sum
}
let elapsed = clock.now - start
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
let accepted = fake.delivered.count - 1
print("pushes sent: \(sent) of \(total), accepted by fake: \(accepted) concurrency: \(concurrency) connections: \(fake.server.acceptedConnections)")
print(String(format: "elapsed: %.2f s, throughput: %.0f pushes/s", seconds, Double(accepted) / seconds))
print(String(format: "apns pushes_per_s=%.0f connections=%d accepted=%d", Double(accepted) / seconds, fake.server.acceptedConnections, accepted))
try await client.shutdown().get()
await fake.shutdown()
