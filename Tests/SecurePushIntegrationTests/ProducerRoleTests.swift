import Foundation
import Logging
import PostgresNIO
import SecurePushPostgres
import SecurePushServer
import SecurePushStore
import SecurePushTestSupport
import Testing

/// `securepush_producer` (migration 020): a login granted it can enqueue, cancel and read delivery status, and
/// every other read or write is refused (issue 32, item 2).
@Suite("The producer role: enqueue, cancel and status, nothing else")
struct ProducerRoleTests {
    /// Runs `body` with the URL of a new login granted `roles` (`securepush_producer` only by default), then drops it.
    static func withLogin(
        _ db: TestDatabase, roles: String = "securepush_producer", _ body: @Sendable (DatabaseURL) async throws -> Void
    ) async throws {
        let role = "sp_login_\(UUID().uuidString.prefix(8).lowercased())"
        let password = UUID().uuidString
        try await db.execute("CREATE ROLE \(unescaped: role) LOGIN PASSWORD '\(unescaped: password)' IN ROLE \(unescaped: roles)")
        var url = db.url
        url.username = role
        url.password = password
        var failure: (any Error)?
        do { try await body(url) } catch { failure = error }
        try await db.execute("DROP ROLE \(unescaped: role)")
        if let failure { throw failure }
    }

    /// Runs `body` with a client logged in as a new login granted `roles` (`securepush_producer` only by default).
    static func asProducer(
        _ db: TestDatabase, roles: String = "securepush_producer", _ body: @Sendable (PostgresClient) async throws -> Void
    ) async throws {
        try await withLogin(db, roles: roles) { url in
            let client = url.makeClient(poolSize: 2, logger: db.logger)
            try await TestDatabase.withRunning(client) { try await body(client) }.get()
        }
    }

    /// Runs `statement` as the producer and returns its rows' first column as text.
    static func rows(_ client: PostgresClient, _ statement: String, _ logger: Logger) async throws -> [String?] {
        try await client.query(PostgresQuery(unsafeSQL: statement), logger: logger).collect().map { try $0.decode(String?.self) }
    }

    @Test("a producer login enqueues (INSERT, enqueue with a collapse key, idempotency), cancels and reads status and fetch stats")
    func allowed() async throws {
        try await TestDatabase.with { db in
            _ = try await db.insertDevice(user: "alice", token: "alice-phone")
            try await db.execute(
                "INSERT INTO securepush.dispatchers (id, host, pid, role, version) VALUES (gen_random_uuid(), 'h', 1, 'dispatcher', 't')")
            try await Self.asProducer(db) { producer in
                let inserted = try await Self.rows(
                    producer, #"INSERT INTO securepush.notifications (user_id, payload) VALUES ('alice', '{"t":1}') RETURNING id::text"#, db.logger)
                #expect(inserted.count == 1)
                let enqueued = try await Self.rows(
                    producer,
                    #"SELECT securepush.enqueue('alice', '{"t":2}', collapse_key => 'thread', idempotency_key => 'k1')::text"#, db.logger)
                let again = try await Self.rows(
                    producer,
                    #"SELECT securepush.enqueue('alice', '{"t":2}', collapse_key => 'thread', idempotency_key => 'k1')::text"#, db.logger)
                #expect(enqueued == again, "the idempotency key finds the first")
                let status = try await Self.rows(
                    producer, "SELECT state FROM securepush.notification_status WHERE user_id = 'alice' ORDER BY created_at", db.logger)
                #expect(status == ["pending", "pending"])
                let cancelled = try await Self.rows(producer, "SELECT cancelled_deliveries::text FROM securepush.cancel('alice', 'k1')", db.logger)
                #expect(cancelled == ["1"])
                _ = try await Self.rows(producer, "SELECT platform FROM securepush.fetch_stats(interval '1 hour')", db.logger)
            }
            // A dispatcher's fan-out (here the owner's), after the cancel's own: deliveries, the collapse digest and
            // the cancellation are there.
            try await db.fanOut()
            let deliveries: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.deliveries")
            #expect(deliveries == 1)
            let digested: Int64 = try await db.scalar(
                "SELECT count(*)::bigint FROM securepush.delivery_log WHERE outcome = 'cancelled' AND notification_id IN (SELECT id FROM securepush.notifications WHERE collapse_key = 'thread')"
            )
            #expect(digested == 1)
        }
    }

    @Test("every other read and write is refused: payloads, devices, tokens, queue, history, settings, the server's functions")
    func refused() async throws {
        try await TestDatabase.with { db in
            let device = try await db.insertDevice(user: "bob", token: "bob-phone")
            _ = try await db.enqueue(user: "bob", payload: #"{"secret":"PAYLOAD"}"#)
            let forbidden = [
                "SELECT payload::text FROM securepush.notifications",
                "SELECT preview::text FROM securepush.notifications",
                "SELECT token FROM securepush.devices",
                "SELECT encode(secret_hash, 'hex') FROM securepush.devices",
                "SELECT encode(seal_auth, 'hex') FROM securepush.devices",
                "SELECT id::text FROM securepush.deliveries",
                "SELECT id::text FROM securepush.delivery_log",
                "SELECT value FROM securepush.settings",
                "SELECT event FROM securepush.audit_log",
                "SELECT user_id FROM securepush.badge_changes",
                "SELECT device_id::text FROM securepush.fetches",
                "SELECT user_id FROM securepush.quiet_hours",
                "SELECT user_id FROM securepush.category_mutes",
                "SELECT host FROM securepush.dispatchers",
                "SELECT encode(salt, 'hex') FROM securepush.collapse_salt",
                "SELECT device_secret FROM securepush.register_device('bob', 'simulated', 'stolen-token')",
                "SELECT id::text FROM securepush.claim_deliveries(10, ARRAY['simulated'], 1000, gen_random_uuid(), gen_random_uuid(), false, 9, false)",
                "SELECT payload FROM securepush.device_fetch('\(device)', sha256('x'::bytea), ARRAY['k'], ARRAY[gen_random_uuid()])",
                "SELECT securepush.collapse_digest('bob', 'thread')",
                "SELECT securepush.deactivate_device('\(device)')::text",
                "SELECT securepush.set_quiet_hours('bob', 'Europe/Berlin', '22:00', '07:00')::text",
                "UPDATE securepush.notifications SET read_at = now() RETURNING id::text",
                "DELETE FROM securepush.notifications RETURNING id::text",
                "UPDATE securepush.notifications SET payload = '{}' RETURNING id::text",
            ]
            try await Self.asProducer(db) { producer in
                for statement in forbidden {
                    do {
                        let rows = try await Self.rows(producer, statement, db.logger)
                        Issue.record("a producer ran \(statement): \(rows.count) row(s)")
                    } catch let error as PSQLError {
                        #expect(error.serverInfo?[.sqlState] == "42501", "\(statement): \(String(reflecting: error))")
                    }
                }
            }
            let payload: String = try await db.scalar("SELECT payload::text FROM securepush.notifications")
            #expect(payload.contains("PAYLOAD"), "nothing was changed")
        }
    }
}
