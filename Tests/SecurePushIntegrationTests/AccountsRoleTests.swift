import Foundation
import PostgresNIO
import SecurePushTestSupport
import Testing

/// `securepush_accounts` (migration 040): the login of an app's account service runs what the documentation tells a
/// backend to run about its users' devices and preferences, and nothing else (issue 50, item 1).
@Suite("The accounts role: users' devices and preferences, nothing else")
struct AccountsRoleTests {
    @Test("an accounts login registers and deactivates devices and sets quiet hours and muted categories, as the README shows")
    func allowed() async throws {
        try await TestDatabase.with { db in
            try await ProducerRoleTests.asProducer(db, roles: "securepush_accounts") { accounts in
                let registered = try await ProducerRoleTests.rows(
                    accounts,
                    """
                    SELECT device_id::text FROM securepush.register_device(user_id => 'alice', platform => 'simulated',
                                                                           token => 'alice-phone')
                    """, db.logger)
                let device = try #require(registered.first ?? nil)
                let checked = try await ProducerRoleTests.rows(
                    accounts,
                    "SELECT coalesce(rebound_from, 'none') FROM securepush.register_device_checked('bob', 'simulated', 'bob-phone')",
                    db.logger)
                #expect(checked == ["none"])
                _ = try await ProducerRoleTests.rows(
                    accounts, "SELECT securepush.set_quiet_hours('alice', 'Europe/Berlin', '22:00', '07:00')::text", db.logger)
                #expect(try await ProducerRoleTests.rows(accounts, "SELECT securepush.clear_quiet_hours('alice')::text", db.logger) == ["true"])
                #expect(
                    try await ProducerRoleTests.rows(accounts, "SELECT securepush.set_category_muted('alice', 'marketing', true)::text", db.logger)
                        == ["0"])
                #expect(
                    try await ProducerRoleTests.rows(
                        accounts, "SELECT category || ':' || muted FROM securepush.user_categories('alice')", db.logger) == ["marketing:true"])
                #expect(
                    try await ProducerRoleTests.rows(accounts, "SELECT securepush.deactivate_device('\(device)')::text", db.logger) == ["true"])
            }
            let active: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.devices WHERE active")
            #expect(active == 1, "bob's device stays, alice's was deactivated")
        }
    }

    @Test("every other read and write is refused: notifications, payloads, tokens, secrets, the queue, enqueueing, the server's functions")
    func refused() async throws {
        try await TestDatabase.with { db in
            let device = try await db.insertDevice(user: "bob", token: "bob-phone")
            let id = try await db.enqueue(user: "bob", payload: #"{"secret":"PAYLOAD"}"#)
            let forbidden = [
                "SELECT payload::text FROM securepush.notifications",
                "SELECT user_id FROM securepush.notifications",
                "SELECT token FROM securepush.devices",
                "SELECT encode(secret_hash, 'hex') FROM securepush.devices",
                "SELECT id::text FROM securepush.deliveries",
                "SELECT id::text FROM securepush.delivery_log",
                "SELECT user_id FROM securepush.quiet_hours",
                "SELECT event FROM securepush.audit_log",
                "SELECT state FROM securepush.notification_status",
                #"INSERT INTO securepush.notifications (user_id, payload) VALUES ('bob', '{}') RETURNING id::text"#,
                #"SELECT securepush.enqueue('bob', '{"t":1}')::text"#,
                "SELECT id::text FROM securepush.cancel('\(id)')",
                "SELECT id::text FROM securepush.claim_deliveries(10, ARRAY['simulated'], 1000, gen_random_uuid(), gen_random_uuid(), false, 9, false)",
                "SELECT payload FROM securepush.device_fetch('\(device)', sha256('x'::bytea), ARRAY['k'], ARRAY[gen_random_uuid()])",
                "SELECT device_secret FROM securepush.rotate_device_secret('\(device)')",
                "SELECT securepush.delete_retired_devices(interval '1 second', 10)::text",
            ]
            try await ProducerRoleTests.asProducer(db, roles: "securepush_accounts") { accounts in
                for statement in forbidden {
                    do {
                        let rows = try await ProducerRoleTests.rows(accounts, statement, db.logger)
                        Issue.record("an accounts login ran \(statement): \(rows.count) row(s)")
                    } catch let error as PSQLError {
                        #expect(error.serverInfo?[.sqlState] == "42501", "\(statement): \(String(reflecting: error))")
                    }
                }
            }
        }
    }
}
