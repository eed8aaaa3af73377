import Foundation
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Prometheus
import SecurePushCore
import SecurePushDispatcher
import SecurePushFakes
import SecurePushServer
import SecurePushTestSupport
import Testing

/// A provider storm against the real APNs provider and a fake APNs server: the circuit breaker opens,
/// shows in `/status` and `/metrics`, sends pause without burning attempts, and everything is delivered
/// exactly once after the storm.
@Suite("Provider storms and circuit breakers")
struct ProviderStormTests {
    /// The value of the first `/metrics` sample of `name` whose labels contain every one of `labels`.
    static func sample(_ text: String, _ name: String, _ labels: [String]) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + "{") && labels.allSatisfy({ line.contains($0) }) {
            return line.split(separator: " ").last.flatMap { Double($0) }
        }
        return nil
    }

    @Test("an APNs 503 storm opens the breaker (seen in /status and /metrics); afterwards all is delivered exactly once")
    func apnsStorm() async throws {
        LoggingBootstrap.bootstrap(level: .critical)
        let configuration = {
            var configuration = DispatcherConfiguration.testing
            // Retries would exhaust quickly without the breaker (every 20–200 ms); with it, attempts are only probes.
            configuration.retry = RetryPolicy(maxAttempts: 40, baseDelay: .milliseconds(20), maxDelay: .milliseconds(200), jitter: 0.1)
            return configuration
        }()
        let count = 20
        try await TestDatabase.with { db in
            let key = try FakeCredentials.apnsKey()
            let fake = try await FakeAPNsServer.start(keys: [key.signingKey()])
            try await withShutdown(of: fake) {
                fake.setDefaultBehavior(.reject(status: 503, reason: "ServiceUnavailable"))
                var tokens: [String] = []
                for index in 0..<count {
                    let token = hexToken()
                    tokens.append(token)
                    _ = try await db.insertDevice(user: "storm-\(index)", platform: "apns", token: token)
                    _ = try await db.enqueue(user: "storm-\(index)", payload: #"{"secret":"STORM-PAYLOAD"}"#)
                }
                let settings = FakeCredentials.environment(
                    apns: fake, key: key)
                let metricsBefore = LoggingBootstrap.metricsRegistry.emitToString()
                let openedBefore = Self.sample(metricsBefore, "securepush_circuit_opened_total", [#"platform="apns""#]) ?? 0
                try await APIHarness.with(db) { _, client in
                    try await withPlatformDispatcher(db, platforms: "apns", settings: settings, dispatcher: configuration) { harness in
                        let dispatcherID = harness.assembly.identity.id.uuidString.lowercased()
                        // /status (validated against docs/openapi.json by the client) shows the breaker.
                        try await db.eventually("/status shows the open APNs breaker") {
                            let response = try await client.execute(uri: "/status", method: .get)
                            let circuits = response.body.json["open_circuits"] as? [[String: Any]] ?? []
                            return circuits.contains {
                                $0["platform"] as? String == "apns" && $0["host"] is NSNull && $0["dispatcher"] as? String == dispatcherID
                                    && ["open", "half_open"].contains($0["state"] as? String ?? "")
                            }
                        }
                        try await db.eventually("/metrics shows it open and counts its openings") {
                            let text = try await client.execute(uri: "/metrics", method: .get).body.text
                            let gauge = Self.sample(text, "securepush_circuit_open", [#"platform="apns""#, #"host="""#])
                            let opened = Self.sample(text, "securepush_circuit_opened_total", [#"platform="apns""#]) ?? 0
                            // Three openings: the storm lasted through two failed probes (1 s, then 2 s open).
                            return (gauge == 1 || gauge == 0.5) && opened >= openedBefore + 3
                        }
                        // Without the breaker, 20 deliveries retried every ≤ 200 ms for > 3 s would be hundreds of requests.
                        let stormRequests = fake.requests.count
                        #expect(stormRequests >= count && stormRequests < count + 20, "sends paused while open: \(stormRequests) requests")
                        let table = try await client.execute(uri: "/status", method: .get).body.json
                        let dispatchers = table["dispatchers"] as? [[String: Any]] ?? []
                        let mine = dispatchers.first { $0["id"] as? String == dispatcherID }
                        #expect((mine?["circuits"] as? [[String: Any]])?.isEmpty == false, "the dispatcher's own row lists its circuit")

                        fake.setDefaultBehavior(nil)
                        try await db.eventually(
                            "every notification delivered", timeout: .seconds(60), count: "SELECT count(*)::bigint FROM securepush.delivery_log",
                            is: Int64(count))
                        try await db.eventually("/status shows no open circuit once a heartbeat saw it closed") {
                            let response = try await client.execute(uri: "/status", method: .get)
                            return (response.body.json["open_circuits"] as? [Any])?.isEmpty == true
                        }
                    }
                }
                try await db.expectQueueDrained(logged: Int64(count))
                let outcomes = try await db.client.query(
                    "SELECT d.token, l.outcome, l.attempts FROM securepush.delivery_log l JOIN securepush.devices d ON d.id = l.device_id",
                    logger: db.logger
                ).collect()
                #expect(outcomes.count == count)
                let requests = fake.requests
                let delivered = fake.delivered
                for row in outcomes {
                    let (token, outcome, attempts) = try row.decode((String, String, Int32).self)
                    let sentTo = requests.filter { $0.path == "/3/device/\(token)" }.count
                    #expect(outcome == "sent")
                    #expect(Int(attempts) == sentTo, "attempts counted only for requests actually sent: \(attempts) vs \(sentTo)")
                    #expect(delivered.filter { $0.path == "/3/device/\(token)" }.count == 1, "delivered exactly once")
                }
                #expect(Set(tokens).count == count)
                for request in requests {
                    #expect(!String(decoding: request.body, as: UTF8.self).contains("STORM-PAYLOAD"))
                }
            }
        }
    }
}
