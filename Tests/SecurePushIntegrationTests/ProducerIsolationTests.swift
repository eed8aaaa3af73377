import Foundation
import Logging
import PostgresNIO
import SecurePushServer
import SecurePushStore
import SecurePushTestSupport
import Testing

/// Producer logins are apart (issue 47, item 3; migration 039): each notification records the login that
/// enqueued it, and a producer sees, cancels, resolves idempotency keys of and reads events of its own only;
/// another producer's notification is, to it, one that does not exist. A login granted `securepush_operator`
/// sees all.
@Suite("Producer logins apart")
struct ProducerIsolationTests {
    static func rows(_ client: PostgresClient, _ statement: String, _ logger: Logger) async throws -> [String?] {
        try await ProducerRoleTests.rows(client, statement, logger)
    }

    static func sqlState(_ client: PostgresClient, _ statement: String, _ logger: Logger) async throws -> (state: String?, message: String) {
        do {
            _ = try await rows(client, statement, logger)
            return (nil, "")
        } catch let error as PSQLError {
            return (error.serverInfo?[.sqlState], error.serverInfo?[.message] ?? "")
        }
    }

    @Test("a producer sees, cancels, resolves keys of and reads the events of its own notifications only")
    func apart() async throws {
        try await TestDatabase.with { db in
            _ = try await db.insertDevice(user: "shared", token: "shared-phone")
            try await ProducerRoleTests.asProducer(db) { billing in
                try await ProducerRoleTests.asProducer(db) { chat in
                    let logger = db.logger
                    let billingID = try #require(
                        try await Self.rows(billing, #"SELECT securepush.enqueue('shared', '{"n":1}', idempotency_key => 'k1')::text"#, logger)
                            .first ?? nil)
                    let chatID = try #require(
                        try await Self.rows(
                            chat, #"INSERT INTO securepush.notifications (user_id, payload) VALUES ('shared', '{"n":2}') RETURNING id::text"#, logger
                        )
                        .first ?? nil)
                    _ = try await db.fanOut()
                    // Status and the table itself: each its own.
                    let chatSees = try await Self.rows(chat, "SELECT DISTINCT notification_id::text FROM securepush.notification_status", logger)
                    #expect(chatSees == [chatID])
                    let chatRows = try await Self.rows(chat, "SELECT id::text FROM securepush.notifications", logger)
                    #expect(chatRows == [chatID])
                    let billingSees = try await Self.rows(
                        billing, "SELECT DISTINCT notification_id::text FROM securepush.notification_status", logger)
                    #expect(billingSees == [billingID])
                    // Another producer's idempotency key: refused without its id, or skipped by ON CONFLICT.
                    let reused = try await Self.sqlState(
                        chat, #"SELECT securepush.enqueue('shared', '{"n":3}', idempotency_key => 'k1')::text"#, logger)
                    #expect(reused.state == "23505")
                    #expect(!reused.message.contains(billingID))
                    let skipped = try await Self.rows(
                        chat,
                        #"INSERT INTO securepush.notifications (user_id, payload, idempotency_key) VALUES ('shared', '{}', 'k1') ON CONFLICT (user_id, idempotency_key) DO NOTHING RETURNING id::text"#,
                        logger)
                    #expect(skipped.isEmpty)
                    // Its own key still resolves to its own notification.
                    let again = try await Self.rows(
                        billing, #"SELECT securepush.enqueue('shared', '{"n":1}', idempotency_key => 'k1')::text"#, logger)
                    #expect(again == [billingID])
                    // Cancelling another's: as if it did not exist; nothing happens to it.
                    #expect(try await Self.rows(chat, "SELECT id::text FROM securepush.cancel('\(billingID)'::uuid)", logger).isEmpty)
                    #expect(try await Self.rows(chat, "SELECT id::text FROM securepush.cancel('shared', 'k1')", logger).isEmpty)
                    let cancelled: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.notifications WHERE cancelled_at IS NOT NULL")
                    #expect(cancelled == 0)
                    // A name of another login cannot be written into the row.
                    let forged = try await Self.sqlState(
                        chat, #"INSERT INTO securepush.notifications (user_id, payload, producer) VALUES ('shared', '{}', 'somebody')"#, logger)
                    #expect(forged.state == "42501")
                    // Events: each its own.
                    let chatEvents = try await Self.rows(chat, "SELECT notification_id::text FROM securepush.events_after(NULL, 100)", logger)
                    #expect(!chatEvents.isEmpty && chatEvents.allSatisfy { $0 == chatID }, "\(chatEvents)")
                    let billingEvents = try await Self.rows(billing, "SELECT notification_id::text FROM securepush.events_after(NULL, 100)", logger)
                    #expect(!billingEvents.isEmpty && billingEvents.allSatisfy { $0 == billingID }, "\(billingEvents)")
                    // Its own cancel still works.
                    #expect(try await Self.rows(billing, "SELECT id::text FROM securepush.cancel('shared', 'k1')", logger) == [billingID])
                }
            }
        }
    }

    @Test("a login granted securepush_operator sees, and reads the events of, every producer's notifications")
    func operatorSeesAll() async throws {
        try await TestDatabase.with { db in
            _ = try await db.insertDevice(user: "ops-user", token: "ops-phone")
            try await ProducerRoleTests.asProducer(db) { producer in
                _ = try await Self.rows(producer, #"SELECT securepush.enqueue('ops-user', '{"n":1}')::text"#, db.logger)
            }
            _ = try await db.enqueue(user: "ops-user", payload: #"{"n":2}"#)
            _ = try await db.fanOut()
            try await ProducerRoleTests.asProducer(db, roles: "securepush_producer, securepush_operator") { client in
                let seen = try await Self.rows(client, "SELECT count(DISTINCT notification_id)::text FROM securepush.notification_status", db.logger)
                #expect(seen == ["2"])
                let events = try await Self.rows(
                    client, "SELECT count(DISTINCT notification_id)::text FROM securepush.events_after(NULL, 100)", db.logger)
                #expect(events == ["2"])
            }
        }
    }
}
