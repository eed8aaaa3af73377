import Foundation
import PostgresNIO
import SecurePushTestSupport
import Testing

/// A purged payload takes its preview and its producer's traceparent with it. Since migration 045 the routines
/// that purge clear all three in their own UPDATE and an AFTER trigger is the net under any other UPDATE of the
/// payload: the BEFORE ROW trigger it replaces made PostgreSQL lock every notification row any UPDATE changed
/// (a WAL record on every read's mark).
@Suite("Purged payloads take their preview and traceparent")
struct PayloadErasureTests {
    static let traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

    /// Inserts a notification with a preview and a traceparent, and returns its id.
    func insert(_ db: TestDatabase, user: String, expired: Bool = false) async throws -> UUID {
        try await db.scalar(
            """
            INSERT INTO securepush.notifications (user_id, payload, preview, traceparent, created_at, expires_at)
            VALUES (\(user), '{"secret":"s"}', '{"title":"t"}', \(Self.traceparent),
                    now() - interval '2 hours', now() + CASE WHEN \(expired) THEN interval '-1 hour' ELSE interval '1 hour' END)
            RETURNING id
            """)
    }

    /// "payload preview traceparent" of a notification, each as "set" or "null".
    func fields(_ db: TestDatabase, _ id: UUID) async throws -> String {
        try await db.scalar(
            """
            SELECT concat_ws(' ', CASE WHEN payload IS NULL THEN 'null' ELSE 'set' END,
                             CASE WHEN preview IS NULL THEN 'null' ELSE 'set' END,
                             CASE WHEN traceparent IS NULL THEN 'null' ELSE 'set' END)
            FROM securepush.notifications WHERE id = \(id)
            """)
    }

    @Test("the purge, the cancel and any UPDATE that clears a payload erase its preview and traceparent; a read's mark keeps them")
    func erasure() async throws {
        try await TestDatabase.with { db in
            let read = try await insert(db, user: "pe")
            let cleared = try await insert(db, user: "pe")
            let cancelled = try await insert(db, user: "pe")
            let expired = try await insert(db, user: "pe", expired: true)
            _ = try await db.fanOut()

            try await db.execute("UPDATE securepush.notifications SET read_at = now() WHERE id = \(read)")
            #expect(try await fields(db, read) == "set set set", "a mark erases nothing")

            try await db.execute("UPDATE securepush.notifications SET payload = NULL, purged_at = now() WHERE id = \(cleared)")
            #expect(try await fields(db, cleared) == "null null null", "the trigger's net")

            try await db.execute("SELECT * FROM securepush.cancel(\(cancelled))")
            #expect(try await fields(db, cancelled) == "null null null")

            let purged: Int32 = try await db.scalar("SELECT securepush.purge_payloads(NULL, 100)")
            #expect(purged == 1)
            #expect(try await fields(db, expired) == "null null null")
            #expect(try await fields(db, read) == "set set set", "the purge takes expired ones only here")
        }
    }

    @Test("no BEFORE ROW UPDATE trigger on notifications: it would lock every row an UPDATE changes (a WAL record per read)")
    func noRowLockingTrigger() async throws {
        try await TestDatabase.with { db in
            // tgtype bits: 1 row, 2 before, 16 update.
            let names: String = try await db.scalar(
                """
                SELECT coalesce(string_agg(tgname, ', '), '') FROM pg_trigger
                WHERE tgrelid = 'securepush.notifications'::regclass AND NOT tgisinternal
                  AND tgtype & 1 <> 0 AND tgtype & 2 <> 0 AND tgtype & 16 <> 0
                """)
            #expect(names == "")
        }
    }
}
