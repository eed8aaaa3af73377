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

        /// Whether the fake accepted a push announcing `id`, among its pushes after the first `skipping`.
        func pushed(_ id: UUID, skipping: Int = 0) -> Bool {
            let needle = id.uuidString.lowercased()
            return fake.deliveries.dropFirst(skipping).contains { String(decoding: $0.plaintext, as: UTF8.self).lowercased().contains(needle) }
        }

        /// Enqueues one notification for `user` and returns the seconds until the fake accepted its push.
        func latency(_ user: String) async throws -> Double {
            let clock = ContinuousClock()
            let earlier = fake.deliveries.count
            let start = clock.now
            let id = try await enqueue(user)
            try await eventually("notification pushed", timeout: .seconds(30)) { pushed(id, skipping: earlier) }
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
                settings["SECUREPUSH_WEBPUSH_TIMEOUT"] = "\(Int(stallTimeout.components.seconds))s"
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

    /// How long a push to a never-answering endpoint is held before the dispatcher gives up on it.
    static let stallTimeout: Duration = .seconds(10)

    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
    }

    /// Registers one attacking account's 19 Web Push devices: 6 on a closed port, 7 the service never answers
    /// (each push waits for the 10 s timeout), 6 it answers 500 for.
    static func registerAttacker(_ user: String, _ served: Served, closedPort: Int) async throws {
        for index in 0..<19 {
            var subscription = served.fake.subscribe()
            if index < 6 {
                subscription.endpoint = "https://127.0.0.1:\(closedPort)/push/\(UUID().uuidString.lowercased())"
            } else {
                served.fake.script(subscription, index < 13 ? .stall : .reject(status: 500))
            }
            try await served.register(user, subscription)
        }
    }

    /// Each of `victims` gets a notification every 100 ms or so for `duration`, all at once: their push latencies.
    static func victimLatencies(_ victims: [String], _ served: Served, for duration: Duration) async throws -> [Double] {
        let start = ContinuousClock.now
        return try await withThrowingTaskGroup(of: [Double].self) { group in
            for victim in victims {
                group.addTask {
                    var latencies: [Double] = []
                    while ContinuousClock.now - start < duration {
                        latencies.append(try await served.latency(victim))
                        try await Task.sleep(for: .milliseconds(100))
                    }
                    return latencies
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
    }

    @Test(
        "1, 3 or 5 accounts of 19 endpoints each (closed ports, never answering, 500), 1 notification a second each (5 accounts: 4): other users' pushes never wait for the attackers' (each on its first attempt; under attack, accepted before any of the attack's stalled pushes could time out), during the attack and after it, and the breaker stays closed",
        arguments: [(1, 1), (3, 1), (5, 4)])
    func attackLeavesOthersOnTime(attackers: Int, perSecond: Int) async throws {
        // Not a latency bound (a time bound in a test on 2 shared cores fails on the machine's load: one of 250 ms
        // did, 363 ms against an allowed 351 in a CI run; the latencies are printed, the targets are ops/bench's).
        // What is judged is whether any other user's push waited for an attacker's: a never-answering endpoint holds
        // its push until the dispatcher's timeout (`stallTimeout`), so no slot, connection or batch an attacker's
        // stalled push holds can free up before the attack's start plus that timeout. Every other user's push
        // enqueued in the attack's first 6 s must be accepted before then, or it waited for one. After it, the
        // stalled pushes time out and reset their streams (5 accounts at 4/s: faster than the service allows a
        // connection): other users' pushes still go out, each on its first attempt.
        try await Self.withServed { served in
            let traffic = served.fake.server.traffic
            let victims = (0..<8).map { "victim-\($0)" }
            for victim in victims { try await served.register(victim, served.fake.subscribe()) }
            let baseline = try await Self.victimLatencies(victims, served, for: .seconds(4))

            // A port nothing listens on: a connection to it is refused.
            guard let closedPort = LoopbackPort.free() else { throw TestFailure("no free port on 127.0.0.1") }
            let accounts = (0..<attackers).map { "mallory-\($0)" }
            for account in accounts { try await Self.registerAttacker(account, served, closedPort: closedPort) }
            let attackStart = ContinuousClock.now
            let (attacked, acceptedBy, held) = try await withThrowingTaskGroup(of: [Double].self) { group in
                for account in accounts {
                    group.addTask {
                        // A notification a second for 14 s (the security test's pace; 5 accounts four times as
                        // fast): 19 failing pushes each per account, their retries, and stalled ones piling up.
                        for _ in 0..<(14 * perSecond) {
                            _ = try await served.enqueue(account)
                            try await Task.sleep(for: .milliseconds(1000 / perSecond))
                        }
                        return []
                    }
                }
                // Other users' pushes enqueued in the attack's first 6 s, all accepted by `acceptedBy`.
                let latencies = try await Self.victimLatencies(victims, served, for: .seconds(6))
                let (acceptedBy, held) = (ContinuousClock.now - attackStart, traffic.stalled)
                try await group.waitForAll()
                return (latencies, acceptedBy, held)
            }
            // The attack stopped (its retries and stalled pushes are still under way): other users' pushes flow.
            let after = try await Self.victimLatencies(victims, served, for: .seconds(5))
            print(
                "push-service isolation, \(attackers) attacking account(s) at \(perSecond)/s: normal p99 \(Self.percentile(baseline, 0.99)) s over \(baseline.count), under attack p50 \(Self.percentile(attacked, 0.5)) s, p99 \(Self.percentile(attacked, 0.99)) s over \(attacked.count), after it max \(after.max() ?? 0) s over \(after.count); the pushes under attack all accepted \(acceptedBy) after its start, with \(held) stalled pushes held"
            )
            // The attack held pushes open, and other users' pushes under attack were all accepted before the first of
            // them could time out: none of those waited for one.
            #expect(held >= attackers, "the never-answering endpoints held \(held) pushes")
            #expect(acceptedBy < Self.stallTimeout, "other users' pushes under attack accepted only \(acceptedBy) after its start")
            // While other users were pushed (their successes in the breaker's window), the attackers' failures never
            // opened the service's breaker. (Once nobody else is pushed, failures of 3 or more users and no success
            // look like an outage, by design: checked before the wait below.)
            #expect(try await served.breakerOpenings() == 0, "the attackers' failures never opened the service's breaker")
            // Every victim's notification went out once, on its first attempt: none failed or was retried
            // because of the attack (a connection closed under it, a breaker, a refused stream). (The fake accepts a
            // push before its outcome row is written: the rows are awaited, then judged.)
            let pushedToVictims = Int64(baseline.count + attacked.count + after.count)
            let victimRows: PostgresQuery = """
                SELECT count(*)::bigint FROM securepush.delivery_log l JOIN securepush.notifications n ON n.id = l.notification_id
                WHERE n.user_id LIKE 'victim-%'
                """
            try await served.db.eventually("every victim's push has its outcome row", timeout: .seconds(30), count: victimRows, is: pushedToVictims)
            let sentFirst: Int64 = try await served.db.scalar(
                """
                SELECT count(*)::bigint FROM securepush.delivery_log l JOIN securepush.notifications n ON n.id = l.notification_id
                WHERE n.user_id LIKE 'victim-%' AND l.outcome = 'sent' AND l.attempts = 1
                """)
            #expect(sentFirst == pushedToVictims, "of \(pushedToVictims) victims' pushes, \(sentFirst) sent on the first attempt")
            // The attackers' pushes ran and spent their attempts (nothing held them without counting).
            let spent: Int64 = try await served.db.scalar(
                """
                SELECT count(*)::bigint FROM securepush.delivery_log l JOIN securepush.notifications n ON n.id = l.notification_id
                WHERE n.user_id LIKE 'mallory-%'
                """)
            let tried: Int64 = try await served.db.scalar(
                """
                SELECT (SELECT count(*) FROM securepush.deliveries d JOIN securepush.notifications n ON n.id = d.notification_id
                        WHERE n.user_id LIKE 'mallory-%' AND d.attempts > 0)
                     -- Still being pushed as items of a claim's lease (migration 046): attempt 1.
                     + (SELECT count(*) FROM securepush.claimed_items c JOIN securepush.notifications n ON n.id = c.notification_id
                        WHERE n.user_id LIKE 'mallory-%')
                """)
            #expect(spent + tried > 0, "the attackers' deliveries were attempted")
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
            try await eventually("every push delivered once the service is back", timeout: .seconds(60)) {
                pushedIDs.allSatisfy { served.pushed($0) }
            }
        }
    }
}
