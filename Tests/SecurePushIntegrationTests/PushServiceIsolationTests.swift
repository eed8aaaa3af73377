import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PostgresNIO
import SecurePushCore
import SecurePushFakes
import SecurePushTestSupport
import Testing

/// Issue 32, item 1, against the real binary and a fake Web Push service on loopback: what one user registers
/// (endpoints that fail, endpoints that never answer) delays no other user's pushes, and a real outage of
/// the service still opens its circuit breaker at once.
@Suite("One user's endpoints cannot stall a push service for others (real binary)", .serialized)
struct PushServiceIsolationTests {
    struct Served: Sendable {
        let port: Int
        let db: TestDatabase
        let fake: FakeWebPushServer

        /// Registers a Web Push device for `user` with `subscription`; returns nothing (the device's credential is not needed).
        func register(_ user: String, _ subscription: FakeWebPushServer.Subscription) async throws {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/devices")
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer \(try await HostileInputTests.userToken(user))")
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(
                ByteBuffer(
                    string: #"""
                        {"platform":"webpush","subscription":{"endpoint":"\#(subscription.endpoint)","keys":{"p256dh":"\#(subscription.p256dh)","auth":"\#(subscription.auth)"}}}
                        """#))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            let body = String(buffer: try await response.body.collect(upTo: 1 << 16))
            #expect(response.status == .created, "\(body)")
        }

        func enqueue(_ user: String) async throws -> UUID {
            try await db.scalar("SELECT securepush.enqueue(user_id => \(user), payload => '{\"title\":\"x\"}'::jsonb)")
        }

        /// Whether the fake accepted a push announcing `id`.
        func pushed(_ id: UUID) -> Bool {
            let needle = id.uuidString.lowercased()
            return fake.deliveries.contains { String(decoding: $0.plaintext, as: UTF8.self).lowercased().contains(needle) }
        }

        /// Enqueues one notification for `user` and returns the seconds until the fake accepted its push.
        func latency(_ user: String) async throws -> Double {
            let clock = ContinuousClock()
            let start = clock.now
            let id = try await enqueue(user)
            try await eventually("notification pushed", timeout: .seconds(30)) { pushed(id) }
            return (clock.now - start).secondsDouble
        }

        /// `securepush_circuit_opened_total` for Web Push, from `/metrics`.
        func breakerOpenings() async throws -> Int {
            let metrics = try await DispatcherOperationsTests.get(port, "/metrics").body
            let line = metrics.split(separator: "\n").first { $0.hasPrefix("securepush_circuit_opened_total") && $0.contains("webpush") }
            return line.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }.map { Int($0) } ?? 0
        }
    }

    static func withServed(_ environment: [String: String] = [:], _ body: @escaping @Sendable (Served) async throws -> Void) async throws {
        let fake = try await FakeWebPushServer.start()
        do {
            try await TestDatabase.with { db in
                var settings = FakeCredentials.environment(webPush: fake, vapidKeyFile: try FakeCredentials.vapidKey().path)
                settings["SECUREPUSH_PROVIDERS"] = "webpush"
                settings["SECUREPUSH_WEBPUSH_TIMEOUT"] = "10s"
                try await withServedAPI(db, role: "all", environment: settings.merging(environment) { $1 }) { port in
                    try await eventually("the server answers", timeout: .seconds(30)) {
                        (try? await DispatcherOperationsTests.get(port, "/healthz"))?.status == 200
                    }
                    try await body(Served(port: port, db: db, fake: fake))
                }
            }
        } catch {
            await fake.shutdown()
            throw error
        }
        await fake.shutdown()
    }

    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
    }

    @Test("19 endpoints of one user that fail or never answer, pushed 4 times a second: other users' pushes keep their latency (p99 within +1 s)")
    func attackLeavesOthersOnTime() async throws {
        try await Self.withServed { served in
            let victims = (0..<8).map { "victim-\($0)" }
            for victim in victims { try await served.register(victim, served.fake.subscribe()) }
            var baseline: [Double] = []
            for index in 0..<20 { baseline.append(try await served.latency(victims[index % victims.count])) }

            // The attacker: 10 endpoints the service answers 500 for, 9 it never answers (each push times out after 10 s).
            for index in 0..<19 {
                let subscription = served.fake.subscribe()
                served.fake.script(subscription, index < 10 ? .reject(status: 500) : .stall)
                try await served.register("mallory", subscription)
            }
            let attackStart = ContinuousClock.now
            let attacked = try await withThrowingTaskGroup(of: [Double].self) { group in
                group.addTask {
                    // 4 notifications a second for 14 s: 76 failing pushes a second, stalled ones piling up.
                    for _ in 0..<56 {
                        _ = try await served.enqueue("mallory")
                        try await Task.sleep(for: .milliseconds(250))
                    }
                    return []
                }
                var latencies: [Double] = []
                // Other users' pushes throughout the attack, until the first stalled pushes have timed out.
                var index = 0
                while ContinuousClock.now - attackStart < .seconds(13) {
                    latencies.append(try await served.latency(victims[index % victims.count]))
                    index += 1
                    try await Task.sleep(for: .milliseconds(100))
                }
                try await group.waitForAll()
                return latencies
            }
            let (normal, attack) = (Self.percentile(baseline, 0.99), Self.percentile(attacked, 0.99))
            print(
                "push-service isolation: normal p99 \(normal) s over \(baseline.count), under attack p50 \(Self.percentile(attacked, 0.5)) s, p99 \(attack) s over \(attacked.count)"
            )
            #expect(attack <= normal + 1, "other users' p99 under attack \(attack) s, normally \(normal) s")
            #expect(try await served.breakerOpenings() == 0, "one user's failures never opened the service's breaker")
            // The attacker's pushes ran and spent their attempts (nothing held them without counting).
            let spent: Int64 = try await served.db.scalar(
                """
                SELECT count(*)::bigint FROM securepush.delivery_log l JOIN securepush.notifications n ON n.id = l.notification_id
                WHERE n.user_id = 'mallory'
                """)
            let tried: Int64 = try await served.db.scalar(
                """
                SELECT count(*)::bigint FROM securepush.deliveries d JOIN securepush.notifications n ON n.id = d.notification_id
                WHERE n.user_id = 'mallory' AND d.attempts > 0
                """)
            #expect(spent + tried > 0, "the attacker's deliveries were attempted")
        }
    }

    @Test("a real outage of the service (every endpoint answers 503) still opens its breaker at once, and it closes when the service is back")
    func outageStillOpens() async throws {
        try await Self.withServed { served in
            let users = (0..<6).map { "user-\($0)" }
            for user in users { try await served.register(user, served.fake.subscribe()) }
            _ = try await served.latency(users[0])
            served.fake.setDefaultBehavior(.reject(status: 503))
            let clock = ContinuousClock()
            let start = clock.now
            var ids: [UUID] = []
            for user in users { ids.append(try await served.enqueue(user)) }
            try await eventually("the breaker opened", timeout: .seconds(10)) { (try? await served.breakerOpenings()) ?? 0 > 0 }
            let openedAfter = (clock.now - start).secondsDouble
            print("push-service isolation: an outage seen by 6 users opened the breaker after \(openedAfter) s")
            #expect(openedAfter < 2, "opened \(openedAfter) s after the outage's first pushes")
            served.fake.setDefaultBehavior(nil)
            let pushedIDs = ids
            try await eventually("every push delivered once the service is back", timeout: .seconds(60)) { pushedIDs.allSatisfy(served.pushed) }
        }
    }
}
