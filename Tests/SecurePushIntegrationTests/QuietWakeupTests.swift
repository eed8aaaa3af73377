import Foundation
import PostgresNIO
import SecurePushCore
import SecurePushTestSupport
import Testing

@Suite("Quiet wake-ups")
struct QuietWakeupTests {
    /// Claims as dispatcher `worker` does (`securepush.claim_deliveries`), returning how many it got.
    static func claim(_ db: TestDatabase, worker: UUID, limit: Int32) async throws -> Int64 {
        try await db.scalar(
            """
            SELECT count(*)::bigint FROM securepush.claim_deliveries(\(limit), ARRAY['simulated'], 60000, gen_random_uuid(), \(worker), false, 999)
            """)
    }

    @Test("producers notify only while a running dispatcher awaits a wake-up: not while it finds work, again once it says it waits")
    func notifyOnlyWhenAwaited() async throws {
        try await TestDatabase.with { db in
            try await db.insertDevice(user: "ann", token: "ann-1")
            let worker = UUID()
            try await db.execute(
                "INSERT INTO securepush.dispatchers (id, host, pid, role, version) VALUES (\(worker), 'test', 1, 'dispatcher', 'test')")
            try await withDeadline(.seconds(30)) {
                try await db.client.withConnection { listener in
                    try await listener.listen(on: "securepush_deliveries") { notifications in
                        var received = notifications.makeAsyncIterator()
                        // Notifications arrive in commit order: a marker sent after an insert tells whether the insert notified.
                        func insertNotified(_ marker: String) async throws -> Bool {
                            _ = try await db.enqueue(user: "ann", payload: "{}")
                            try await db.execute("SELECT pg_notify('securepush_deliveries', \(marker))")
                            guard let first = try await received.next() else { throw TestFailure("the LISTEN connection ended") }
                            if first.payload == marker { return false }
                            #expect(first.payload == "")
                            let next = try await received.next()
                            #expect(next?.payload == marker)
                            return true
                        }
                        #expect(try await insertNotified("registered"), "a dispatcher that never claimed awaits a wake-up")
                        #expect(try await Self.claim(db, worker: worker, limit: 1) == 1, "a claim that finds work")
                        #expect(try await !insertNotified("busy"), "a dispatcher working through a backlog is not notified")
                        #expect(try await Self.claim(db, worker: worker, limit: 100) == 1, "a claim that finds work")
                        #expect(try await !insertNotified("working"), "a dispatcher that found work claims again without a wake-up")
                        #expect(try await Self.claim(db, worker: worker, limit: 100) == 1)
                        #expect(try await Self.claim(db, worker: worker, limit: 100) == 0, "drained: it polls for a moment")
                        #expect(try await !insertNotified("polling"))
                        try await db.execute("SELECT securepush.await_wakeup(\(worker))")
                        #expect(try await insertNotified("awaiting"), "a dispatcher that said it waits is woken")
                        #expect(try await insertNotified("still awaiting"), "until a claim finds work")
                        try await db.execute("UPDATE securepush.dispatchers SET stopped_at = now() WHERE id = \(worker)")
                        #expect(try await !insertNotified("stopped"), "a stopped dispatcher is not woken")
                    }
                }
            }
        }
    }
}
