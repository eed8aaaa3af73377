import Foundation
import PostgresNIO
import SecurePushAPI
import SecurePushCore
import SecurePushReports
import SecurePushStore
import SecurePushTestSupport
import Testing

/// The store's side of the circuit breakers: releasing claims with a delay, and circuits written by
/// the heartbeat and read back by the status report.
@Suite("Circuit breakers in the store")
struct CircuitStoreTests {
    @Test("a release with a delay returns a claim to pending after the delay, without an attempt; without one it keeps its place")
    func releaseWithDelay() async throws {
        try await TestDatabase.with { db in
            _ = try await db.insertDevice(user: "rel", token: "rel-1")
            _ = try await db.enqueue(user: "rel", payload: "{}")
            _ = try await db.enqueue(user: "rel", payload: "{}")
            try await db.fanOut()
            let queue = PostgresDeliveryQueue(client: db.client, logger: db.logger)
            let originalRunAt: [UUID: Date] = try await Dictionary(
                uniqueKeysWithValues: db.client.query("SELECT id, run_at FROM securepush.deliveries", logger: db.logger).collect().map {
                    try $0.decode((UUID, Date).self)
                })
            let batch = try await queue.claim(limit: 10, platforms: [.simulated], lease: .seconds(30), worker: UUID())
            #expect(batch.deliveries.count == 2)
            let (delayed, immediate) = (batch.deliveries[0].id, batch.deliveries[1].id)
            #expect(try await queue.release([delayed], leaseToken: UUID(), delay: .seconds(30)) == 0, "fenced by the lease token")
            #expect(try await queue.release([delayed], leaseToken: batch.leaseToken, delay: .seconds(30)) == 1)
            #expect(try await queue.release([immediate], leaseToken: batch.leaseToken) == 1)
            for id in [delayed, immediate] {
                let row = try await db.client.query(
                    """
                    SELECT state, attempts, lease_token IS NULL, claimed_by IS NULL, extract(epoch FROM run_at - now())::float8, run_at
                    FROM securepush.deliveries WHERE id = \(id)
                    """, logger: db.logger
                ).collect()[0]
                let (state, attempts, unleased, unclaimed, runsIn, runAt) = try row.decode((String, Int32, Bool, Bool, Double, Date).self)
                #expect(state == "pending" && attempts == 0 && unleased && unclaimed, "released without counting an attempt")
                if id == delayed {
                    #expect(runsIn > 25 && runsIn <= 30, "runnable again only after the delay: in \(runsIn) s")
                } else {
                    #expect(abs(runAt.timeIntervalSince(originalRunAt[id] ?? .distantPast)) < 0.001, "keeps its place in line")
                }
            }
            let again = try await queue.claim(limit: 10, platforms: [.simulated], lease: .seconds(30), worker: UUID())
            #expect(again.deliveries.map(\.id) == [immediate], "the delayed one is not runnable yet")
        }
    }

    @Test("the heartbeat records circuits; /status lists them per dispatcher and, for alive ones, in open_circuits")
    func heartbeatCircuits() async throws {
        try await TestDatabase.with { db in
            let registry = PostgresDispatcherRegistry(client: db.client, logger: db.logger)
            let status = StatusStore(client: db.client, staleAfter: .seconds(30), logger: db.logger)
            let identity = DispatcherIdentity(id: UUID(), host: "box", pid: 7, role: "dispatcher", version: "test")
            let until = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 30).rounded(.down))
            let circuits = [
                CircuitSnapshot(platform: "apns", host: nil, state: .open, openUntil: until),
                CircuitSnapshot(platform: "webpush", host: "push.example.com", state: .halfOpen, openUntil: nil),
            ]
            try await registry.heartbeat(identity, sent: 1, failed: 0, circuits: circuits)
            var report = try await status.report(pendingMigrations: [])
            #expect(report.dispatchers.first?.circuits == circuits)
            #expect(
                report.openCircuits == [
                    .init(platform: "apns", host: nil, state: .open, openUntil: until, dispatcher: identity.id.uuidString.lowercased()),
                    .init(
                        platform: "webpush", host: "push.example.com", state: .halfOpen, openUntil: nil,
                        dispatcher: identity.id.uuidString.lowercased()),
                ])
            let json = String(decoding: try StatusReport.jsonEncoder.encode(report), as: UTF8.self)
            #expect(json.contains(#""host" : null"#) && json.contains(#""state" : "half_open""#) && json.contains(#""open_until" : null"#))

            // A stale dispatcher's circuits may be long over: kept in its row, not in open_circuits.
            try await db.execute("UPDATE securepush.dispatchers SET last_seen_at = now() - interval '45 seconds'")
            report = try await status.report(pendingMigrations: [])
            #expect(report.dispatchers.first?.state == .stale)
            #expect(report.dispatchers.first?.circuits.count == 2)
            #expect(report.openCircuits.isEmpty)
            // Silent for more than twice the stale time: it could not record its stop (or died), so it is stopped.
            try await db.execute("UPDATE securepush.dispatchers SET last_seen_at = now() - interval '61 seconds'")
            report = try await status.report(pendingMigrations: [])
            #expect(report.dispatchers.first?.state == .stopped)
            #expect(report.openCircuits.isEmpty)

            try await registry.heartbeat(identity, sent: 2, failed: 0, circuits: [])
            #expect(try await status.report(pendingMigrations: []).openCircuits.isEmpty, "closed again")
            try await registry.heartbeat(identity, sent: 2, failed: 0, circuits: circuits)
            try await registry.stopped(identity, sent: 3, failed: 0)
            report = try await status.report(pendingMigrations: [])
            #expect(report.dispatchers.first?.circuits.isEmpty == true, "a stopped process has no circuits")
            #expect(report.openCircuits.isEmpty)
        }
    }
}
