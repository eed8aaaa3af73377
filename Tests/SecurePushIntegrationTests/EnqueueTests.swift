import Foundation
import PostgresNIO
import SecurePushCore
import SecurePushTestSupport
import Testing

@Suite("Producers' SQL API")
struct EnqueueTests {
    @Test("a plain INSERT returns a random UUID and fans out to every active device of the recipient only")
    func plainInsertFansOut() async throws {
        try await TestDatabase.with { db in
            let alice = try await [
                db.insertDevice(user: "alice", token: "alice-1"),
                db.insertDevice(user: "alice", token: "alice-2"),
                db.insertDevice(user: "alice", token: "alice-3"),
            ]
            let inactive = try await db.insertDevice(user: "alice", token: "alice-old")
            try await db.execute("UPDATE securepush.devices SET active = false WHERE id = \(inactive)")
            try await db.insertDevice(user: "bob", token: "bob-1")

            let id: UUID = try await db.scalar(
                """
                INSERT INTO securepush.notifications (user_id, payload)
                VALUES ('alice', '{"title":"Payment received","amount":"12.00"}') RETURNING id
                """
            )
            #expect(id.uuidString.lowercased().dropFirst(14).first == "4", "gen_random_uuid gives version-4 UUIDs")
            // The producer's transaction queued it for the dispatchers' fan-out, and wrote no delivery.
            let queued: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.fan_out_queue WHERE notification_id = \(id)")
            let early: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.deliveries")
            #expect(queued == 1 && early == 0)
            #expect(try await db.fanOut() == 1)
            let rows = try await db.client.query(
                "SELECT device_id FROM securepush.deliveries WHERE notification_id = \(id) ORDER BY device_id",
                logger: db.logger
            ).collect()
            let devices = try rows.map { try $0.decode(UUID.self) }
            #expect(Set(devices) == Set(alice))
            let total: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.deliveries")
            #expect(total == 3)
        }
    }

    @Test("ids are not sequential")
    func idsAreRandom() async throws {
        try await TestDatabase.with { db in
            var ids: [UUID] = []
            for index in 0..<20 {
                ids.append(try await db.enqueue(user: "carol", payload: #"{"n":\#(index)}"#))
            }
            let sorted = ids.map(\.uuidString).sorted()
            #expect(sorted != ids.map(\.uuidString), "ids must not come out in insertion order")
            #expect(Set(ids).count == 20)
        }
    }

    @Test("a notification for a user without devices is stored, readable and has no deliveries")
    func noDevices() async throws {
        try await TestDatabase.with { db in
            let id = try await db.enqueue(user: "nobody", payload: #"{"a":1}"#)
            let stored: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.notifications WHERE id = \(id)")
            let deliveries: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.deliveries")
            #expect(stored == 1)
            #expect(deliveries == 0)
        }
    }

    @Test("the same (user, idempotency key) returns the existing id and sends nothing twice")
    func idempotencyKey() async throws {
        try await TestDatabase.with { db in
            try await db.insertDevice(user: "dave", token: "dave-1")
            try await db.insertDevice(user: "dave", token: "dave-2")
            let first = try await db.enqueue(user: "dave", payload: #"{"order":42}"#, idempotencyKey: "order-42")
            let second = try await db.enqueue(user: "dave", payload: #"{"order":42}"#, idempotencyKey: "order-42")
            let other = try await db.enqueue(user: "erin", payload: #"{"order":42}"#, idempotencyKey: "order-42")
            #expect(first == second)
            #expect(other != first)
            try await db.fanOut()
            let notifications: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.notifications WHERE user_id = 'dave'")
            let deliveries: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.deliveries WHERE notification_id = \(first)")
            #expect(notifications == 1)
            #expect(deliveries == 2)

            let harness = try DispatcherHarness(database: db)
            try await db.eventually("two pushes") { harness.pushes.count >= 2 }
            await harness.stop()
            try await db.expectQueueDrained(logged: 2)
            #expect(harness.pushes.count == 2)
        }
    }

    @Test("ttl, priority and the configured default TTL")
    func ttlAndDefaults() async throws {
        try await TestDatabase.with { db in
            let withTTL = try await db.enqueue(user: "fay", payload: "{}", ttl: "1 hour")
            let ttlSeconds: Double = try await db.scalar(
                "SELECT extract(epoch FROM expires_at - created_at)::float8 FROM securepush.notifications WHERE id = \(withTTL)")
            #expect(abs(ttlSeconds - 3600) < 1)
            let plain: UUID = try await db.scalar("INSERT INTO securepush.notifications (user_id, payload) VALUES ('fay', '{}') RETURNING id")
            let defaultSeconds: Double = try await db.scalar(
                "SELECT extract(epoch FROM expires_at - created_at)::float8 FROM securepush.notifications WHERE id = \(plain)")
            #expect(abs(defaultSeconds - 7 * 86_400) < 1)
            let urgent: UUID = try await db.scalar("SELECT securepush.enqueue(user_id => 'fay', payload => '{}', priority => 7)")
            let priority: Int16 = try await db.scalar("SELECT priority FROM securepush.notifications WHERE id = \(urgent)")
            #expect(priority == 7)
        }
    }

    @Test("bad input gets a precise error: oversize payload, missing user, non-positive ttl")
    func badInput() async throws {
        try await TestDatabase.with { db in
            let big = String(repeating: "x", count: 70_000)
            await #expect(throws: PSQLError.self) {
                try await db.execute("INSERT INTO securepush.notifications (user_id, payload) VALUES ('gil', jsonb_build_object('x', \(big)::text))")
            }
            do {
                try await db.execute("INSERT INTO securepush.notifications (user_id, payload) VALUES ('gil', jsonb_build_object('x', \(big)::text))")
            } catch let error as PSQLError {
                #expect(error.serverInfo?[.message]?.contains("notifications_payload_max_64kib") == true)
            }
            do {
                _ = try await db.enqueue(user: "gil", payload: "{}", ttl: "-1 hour")
                Issue.record("a negative ttl must be refused")
            } catch let error as PSQLError {
                #expect(error.serverInfo?[.message] == "securepush.enqueue: ttl must be positive")
            }
            let count: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.notifications")
            #expect(count == 0)
        }
    }

    @Test("10,000 notifications in one INSERT ... SELECT: one statement, one statement-level trigger, fanned out in batches of 1,000")
    func bulkInsert() async throws {
        try await TestDatabase.with { db in
            try await db.insertSimulatedDevices(1...100, user: "'bulk-' || g", token: "'bulk-token-' || g")
            try await db.insertNumberedNotifications(1...10000, user: "'bulk-' || (g % 100 + 1)")
            let queued: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.fan_out_queue")
            #expect(queued == 10_000)
            // Fanned out in bounded batches, as the dispatchers' claims take them.
            var batches = 0
            while try await db.scalar("SELECT securepush.fan_out_queued(1000)", as: Int32.self) > 0 { batches += 1 }
            #expect(batches == 10)
            let deliveries: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.deliveries")
            #expect(deliveries == 10_000)
            let rowTriggers: Int64 = try await db.scalar(
                """
                SELECT count(*)::bigint FROM pg_trigger
                WHERE tgrelid = 'securepush.notifications'::regclass AND NOT tgisinternal AND (tgtype & 1) = 1 AND (tgtype & 4) = 4
                """
            )
            #expect(rowTriggers == 0, "no per-row INSERT trigger (and so no per-row NOTIFY) on notifications")
            // The only row trigger erases a preview with its payload (migration 017): UPDATE OF payload, never on insert.
            let updateTriggers: [String] = try await db.client.query(
                """
                SELECT tgname::text FROM pg_trigger
                WHERE tgrelid = 'securepush.notifications'::regclass AND NOT tgisinternal AND (tgtype & 1) = 1
                """, logger: db.logger
            ).collect().map { try $0.decode(String.self) }
            #expect(updateTriggers == ["notifications_erase_preview"])
        }
    }
}
