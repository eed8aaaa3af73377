import Foundation
import PostgresNIO
import SecurePushPostgres
import SecurePushStore
import SecurePushTestSupport
import Testing

/// The read since migration 034: a HOT update of the notification and the device, and the purge after a read
/// that walks the reads (`securepush.fetches`) behind `securepush.read_purge_cursor` instead of an index on
/// `read_at`.
@Suite("Reads: HOT marks and the purge after a read")
struct ReadPurgeTests {
    /// Reads `id` as `device` of `user` (the mark and the fetches row of a device's fetch) on `connection`.
    static func read(_ id: UUID, user: String, device: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        _ = try await connection.query(
            "SELECT count(*) FROM securepush.fetch_for_device(\(user), \(device), ARRAY[\(id)]::uuid[]) WHERE live",
            logger: logger
        ).collect()
    }

    /// Updates and HOT updates of devices, then of notifications, counted in this transaction so far.
    static func updates(on connection: PostgresConnection, logger: Logger) async throws -> [Int64] {
        let rows = try await connection.query(
            """
            SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables
            WHERE schemaname = 'securepush' AND relname IN ('notifications', 'devices') ORDER BY relname
            """,
            logger: logger
        ).collect()
        return try rows.flatMap { row in
            let (updated, hot) = try row.decode((Int64, Int64).self)
            return [updated, hot]
        }
    }

    static func purged(_ db: TestDatabase, _ id: UUID) async throws -> Bool {
        try await db.scalar("SELECT purged_at IS NOT NULL AND payload IS NULL FROM securepush.notifications WHERE id = \(id)")
    }

    @Test("a first read marks its notification and its device with HOT updates: no index entry is written")
    func hotMarks() async throws {
        try await TestDatabase.with { db in
            let device = try await db.insertDevice(user: "hot", token: "hot-1")
            let id = try await db.enqueue(user: "hot", payload: #"{"m":1}"#)
            try await db.fanOut()
            let counts: [Int64] = try await db.client.withTransaction(logger: db.logger) { connection in
                // The view also counts what earlier transactions of the connection have not reported yet.
                let before = try await Self.updates(on: connection, logger: db.logger)
                try await Self.read(id, user: "hot", device: device, on: connection, logger: db.logger)
                _ = try await connection.query(
                    "UPDATE securepush.devices SET last_seen_at = now() WHERE id = \(device)", logger: db.logger
                ).collect()
                let after = try await Self.updates(on: connection, logger: db.logger)
                return zip(after, before).map { $0 - $1 }
            }
            // devices: updated once, HOT; notifications: the read's mark, HOT.
            #expect(counts == [1, 1, 1, 1], "updates and HOT updates of devices, then notifications: \(counts)")
            let readAt: Date? = try await db.scalar("SELECT read_at FROM securepush.notifications WHERE id = \(id)")
            #expect(readAt != nil)
        }
    }

    @Test("the purge after a read waits for a read that commits late, then erases it; a read not yet due keeps its payload")
    func lateReadIsNotPassedOver() async throws {
        try await TestDatabase.with { db in
            let device = try await db.insertDevice(user: "rp", token: "rp-1")
            let first = try await db.enqueue(user: "rp", payload: #"{"m":"first"}"#)
            let held = try await db.enqueue(user: "rp", payload: #"{"m":"held"}"#)
            let after = try await db.enqueue(user: "rp", payload: #"{"m":"after"}"#)
            let unread = try await db.enqueue(user: "rp", payload: #"{"m":"unread"}"#)
            try await db.fanOut()
            try await db.client.withConnection { connection in
                try await Self.read(first, user: "rp", device: device, on: connection, logger: db.logger)
            }
            let notDue: Int32 = try await db.scalar("SELECT securepush.purge_payloads(interval '1 hour')")
            #expect(notDue == 0, "read a moment ago: not due an hour after")
            #expect(try await !Self.purged(db, first))

            // A read whose transaction stays open, then a later read that commits.
            let open = try await PostgresConnection.connect(configuration: try db.url.connectionConfiguration(), id: 1, logger: db.logger)
            do {
                _ = try await open.query("BEGIN", logger: db.logger).collect()
                try await Self.read(held, user: "rp", device: device, on: open, logger: db.logger)
                try await db.client.withConnection { connection in
                    try await Self.read(after, user: "rp", device: device, on: connection, logger: db.logger)
                }
                try await eventually("the read before the open one is purged") {
                    _ = try await db.scalar("SELECT securepush.purge_payloads(interval '0 seconds')", as: Int32.self)
                    return try await Self.purged(db, first)
                }
                // The later read is committed and due, but the cursor may not pass the open one.
                #expect(try await !Self.purged(db, after), "passed over the read whose transaction is still open")
                // The cursor's order is (xid, position), as the purge's: positions alone are not monotonic across
                // sessions (the open read's transaction may have a later xid and a smaller position).
                let xidBefore: String = try await db.scalar("SELECT xid::text FROM securepush.read_purge_cursor")
                let positionBefore: Int64 = try await db.scalar("SELECT position FROM securepush.read_purge_cursor")
                _ = try await open.query("COMMIT", logger: db.logger).collect()
                try await open.close()
                try await eventually("both later reads are purged once the open one commits") {
                    _ = try await db.scalar("SELECT securepush.purge_payloads(interval '0 seconds')", as: Int32.self)
                    let heldPurged = try await Self.purged(db, held)
                    let afterPurged = try await Self.purged(db, after)
                    return heldPurged && afterPurged
                }
                let advanced: Bool = try await db.scalar(
                    "SELECT (xid, position) > (\(xidBefore)::xid8, \(positionBefore)::bigint) FROM securepush.read_purge_cursor")
                #expect(advanced, "the cursor moved past (\(xidBefore), \(positionBefore))")
            } catch {
                try? await open.close()
                throw error
            }
            #expect(try await !Self.purged(db, unread), "an unread notification keeps its payload")
        }
    }

    @Test("reads from before 034 are purged from the backlog the migration wrote, which then empties")
    func backlog() async throws {
        try await TestDatabase.with { db in
            let old = try await db.enqueue(user: "bl", payload: #"{"m":"old"}"#)
            let recent = try await db.enqueue(user: "bl", payload: #"{"m":"recent"}"#)
            try await db.fanOut()
            // As 034 found them: read (before 032 a read left no feed position), not purged.
            try await db.execute(
                """
                UPDATE securepush.notifications SET read_at = now() - CASE WHEN id = \(old) THEN interval '2 hours' ELSE interval '1 minute' END
                WHERE id IN (\(old), \(recent))
                """
            )
            try await db.execute(
                """
                INSERT INTO securepush.read_purge_backlog (notification_id, read_at)
                SELECT id, read_at FROM securepush.notifications WHERE id IN (\(old), \(recent))
                """
            )
            let erased: Int32 = try await db.scalar("SELECT securepush.purge_payloads(interval '1 hour')")
            #expect(erased == 1)
            #expect(try await Self.purged(db, old))
            #expect(try await !Self.purged(db, recent))
            let left: Int64 = try await db.scalar("SELECT count(*) FROM securepush.read_purge_backlog")
            #expect(left == 1, "the purged one left the backlog")
        }
    }
}
