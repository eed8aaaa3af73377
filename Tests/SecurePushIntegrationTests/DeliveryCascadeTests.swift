import Foundation
import PostgresNIO
import SecurePushTestSupport
import Testing

/// Since migration 036 deliveries have no foreign keys (their checks locked the notification and the device of
/// every delivery written, a WAL record each): statement triggers delete a notification's or a device's
/// deliveries with it instead. Since 045 the same holds for fetches rows (their key checked the notification of
/// every fetch written).
@Suite("Deliveries and fetches follow their notification and device")
struct DeliveryCascadeTests {
    @Test("deleting notifications or devices deletes their deliveries, whatever their state, and no other's")
    func deletesCascade() async throws {
        try await TestDatabase.with { db in
            let kept = try await db.insertDevice(user: "dc", token: "dc-kept")
            let gone = try await db.insertDevice(user: "dc", token: "dc-gone")
            var notifications: [UUID] = []
            for n in 1...3 { notifications.append(try await db.enqueue(user: "dc", payload: #"{"n":\#(n)}"#)) }
            _ = try await db.fanOut()
            // One delivery of each state.
            try await db.execute(
                """
                UPDATE securepush.deliveries SET state = 'claimed', lease_token = gen_random_uuid(),
                       lease_expires_at = now() + interval '1 minute'
                WHERE notification_id = \(notifications[1])
                """)
            try await db.execute(
                "UPDATE securepush.deliveries SET state = 'scheduled', run_at = now() + interval '1 hour' WHERE notification_id = \(notifications[2])"
            )
            let count = { (sql: String) async throws -> Int64 in try await db.scalar(PostgresQuery(unsafeSQL: sql)) }
            #expect(try await count("SELECT count(*) FROM securepush.deliveries") == 6)

            try await db.execute("DELETE FROM securepush.devices WHERE id = \(gone)")
            #expect(try await count("SELECT count(*) FROM securepush.deliveries WHERE device_id = '\(gone)'") == 0)
            #expect(try await count("SELECT count(*) FROM securepush.deliveries WHERE device_id = '\(kept)'") == 3)

            try await db.execute("DELETE FROM securepush.notifications WHERE id = ANY(\([notifications[1], notifications[2]])::uuid[])")
            let left: [UUID] = try await db.client.query("SELECT notification_id FROM securepush.deliveries", logger: db.logger)
                .collect().map { try $0.decode(UUID.self) }
            #expect(left == [notifications[0]])
            let keys: Int64 = try await count(
                "SELECT count(*) FROM pg_constraint WHERE conrelid = 'securepush.deliveries'::regclass AND contype = 'f'")
            #expect(keys == 0, "no foreign key locks the notification or device of a delivery written")
        }
    }

    @Test("deleting notifications deletes their fetches rows, and no other's; fetches have no foreign key")
    func fetchesFollowTheirNotification() async throws {
        try await TestDatabase.with { db in
            let phone = try await db.insertDevice(user: "fc", token: "fc-phone")
            let tablet = try await db.insertDevice(user: "fc", token: "fc-tablet")
            var notifications: [UUID] = []
            for n in 1...3 { notifications.append(try await db.enqueue(user: "fc", payload: #"{"n":\#(n)}"#)) }
            try await db.execute(
                """
                INSERT INTO securepush.fetches (notification_id, device_id, platform)
                SELECT n, d, 'simulated' FROM unnest(\(notifications)::uuid[]) n, unnest(\([phone, tablet])::uuid[]) d
                """)
            let count = { (sql: String) async throws -> Int64 in try await db.scalar(PostgresQuery(unsafeSQL: sql)) }
            #expect(try await count("SELECT count(*) FROM securepush.fetches") == 6)

            try await db.execute("DELETE FROM securepush.notifications WHERE id = ANY(\([notifications[0], notifications[2]])::uuid[])")
            let left: [UUID] = try await db.client.query(
                "SELECT DISTINCT notification_id FROM securepush.fetches", logger: db.logger
            ).collect().map { try $0.decode(UUID.self) }
            #expect(left == [notifications[1]])
            #expect(try await count("SELECT count(*) FROM securepush.fetches") == 2)
            let keys: Int64 = try await count(
                "SELECT count(*) FROM pg_constraint WHERE conrelid = 'securepush.fetches'::regclass AND contype = 'f'")
            #expect(keys == 0, "no foreign key checks the notification of a fetch written")
        }
    }
}
