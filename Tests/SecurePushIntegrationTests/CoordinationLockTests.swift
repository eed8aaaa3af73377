import Foundation
import Logging
import PostgresNIO
import SecurePushCore
import SecurePushTestSupport
import Testing

@testable import SecurePushPostgres
@testable import SecurePushStore

/// The server's coordination takes locks no producer may take (issue 47, item 2; migration 038): a producer
/// login that held the server's advisory keys froze registrations, mutes, the relay platforms, the webhook and
/// the relay's queue; now those are rows of `securepush.lock_slots` and locks of empty turn tables.
@Suite("Coordination locks producers cannot take")
struct CoordinationLockTests {
    /// Runs `body` with one connection logged in as a new login granted `securepush_producer` only.
    static func withProducerConnection(_ db: TestDatabase, _ body: @Sendable (PostgresConnection) async throws -> Void) async throws {
        try await ProducerRoleTests.withLogin(db) { url in
            let connection = try await PostgresConnection.connect(configuration: try url.connectionConfiguration(), id: 7, logger: db.logger)
            var failure: (any Error)?
            do { try await body(connection) } catch { failure = error }
            try? await connection.close()
            if let failure { throw failure }
        }
    }

    /// The advisory keys the server took before 038, for the user `alice`, her token and the fixed queues.
    static let oldKeys = [
        "securepush.devices:alice", "securepush.token:simulated:alice-new", "securepush.category_mutes:alice",
        "securepush.relay_platforms", "securepush.webhook_state", "securepush.relay_outbox", "securepush.reschedules:alice",
    ]

    @Test("a producer holding every advisory key the server used blocks no registration, mute, relay change, turn or re-timing")
    func advisoryKeysHoldNothing() async throws {
        try await TestDatabase.with { db in
            let device = try await db.insertDevice(user: "alice", token: "alice-phone")
            try await db.execute("INSERT INTO securepush.reschedules (user_id) VALUES ('alice')")
            try await Self.withProducerConnection(db) { producer in
                for key in Self.oldKeys {
                    try await producer.query("SELECT pg_advisory_lock(hashtextextended(\(key), 0))", logger: db.logger)
                }
                try await db.client.withConnection { owner in
                    // A wait would end here as 55P03 rather than hang the test.
                    try await owner.query("SET lock_timeout TO '2s'", logger: db.logger)
                    let registered = try await owner.query(
                        "SELECT count(*)::bigint FROM securepush.register_device_checked('alice', 'simulated', 'alice-second')", logger: db.logger
                    ).collect()
                    #expect(try registered[0].decode(Int64.self) == 1)
                    _ = try await owner.query(
                        "SELECT * FROM securepush.update_device_token(\(device), 'alice-new')", logger: db.logger
                    ).collect()
                    _ = try await owner.query("SELECT securepush.set_category_muted('alice', 'promo', true)", logger: db.logger).collect()
                    _ = try await owner.query("SELECT securepush.set_relay_platforms(ARRAY['apns'])", logger: db.logger).collect()
                    for queue in ["webhook", "relay_outbox"] {
                        try await owner.query("BEGIN", logger: db.logger)
                        let turn = try await owner.query("SELECT securepush.take_turn(\(queue))", logger: db.logger).collect()
                        #expect(try turn[0].decode(Bool.self), "the \(queue) turn is free")
                        try await owner.query("COMMIT", logger: db.logger)
                    }
                    let round = try await owner.query("SELECT more FROM securepush.reschedule_round(5, 100)", logger: db.logger).collect()
                    #expect(try round[0].decode(Bool.self) == false)
                }
                let left: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.reschedules")
                #expect(left == 0, "alice's re-timing ran")
            }
        }
    }

    @Test("a producer may neither lock the slots or turn tables nor call the functions that do")
    func producerCannotTakeThem() async throws {
        try await TestDatabase.with { db in
            try await Self.withProducerConnection(db) { producer in
                let refused = [
                    "SELECT 1 FROM securepush.lock_slots LIMIT 1 FOR UPDATE",
                    "LOCK TABLE securepush.webhook_turn IN EXCLUSIVE MODE",
                    "LOCK TABLE securepush.relay_outbox_turn IN ACCESS SHARE MODE",
                    "SELECT securepush.take_turn('webhook')",
                    "SELECT securepush.lock_slot('devices', 'alice')",
                    "SELECT * FROM securepush.reschedule_round(5, 100)",
                ]
                for statement in refused {
                    try await producer.query("BEGIN", logger: db.logger)
                    do {
                        _ = try await producer.query(PostgresQuery(unsafeSQL: statement), logger: db.logger).collect()
                        Issue.record("a producer ran: \(statement)")
                    } catch let error as PSQLError {
                        #expect(error.serverInfo?[.sqlState] == "42501", "\(statement): \(String(reflecting: error.serverInfo?[.sqlState]))")
                    }
                    try await producer.query("ROLLBACK", logger: db.logger)
                }
            }
        }
    }

    @Test("a queue's turn is held by one transaction at a time, assigns no transaction id, and ends with it")
    func turns() async throws {
        try await TestDatabase.with { db in
            try await db.client.withConnection { first in
                try await db.client.withConnection { second in
                    func take(_ connection: PostgresConnection) async throws -> Bool {
                        try await connection.query("SELECT securepush.take_turn('webhook')", logger: db.logger).collect()[0].decode(Bool.self)
                    }
                    try await first.query("BEGIN", logger: db.logger)
                    #expect(try await take(first))
                    let xid = try await first.query("SELECT pg_current_xact_id_if_assigned()::text", logger: db.logger).collect()[0]
                    #expect(try xid.decode(String?.self) == nil, "no xid: the holder holds back no reader of events_after")
                    try await second.query("BEGIN", logger: db.logger)
                    #expect(try await take(second) == false, "the turn is taken")
                    let relay = try await second.query("SELECT securepush.take_turn('relay_outbox')", logger: db.logger).collect()[0]
                    #expect(try relay.decode(Bool.self), "another queue's turn is apart")
                    try await second.query("ROLLBACK", logger: db.logger)
                    try await first.query("COMMIT", logger: db.logger)
                    try await second.query("BEGIN", logger: db.logger)
                    #expect(try await take(second), "free again once the holder ended")
                    try await second.query("ROLLBACK", logger: db.logger)
                }
            }
        }
    }

    @Test("no routine or server statement takes an advisory lock (migrate's own, before the schema exists, aside)")
    func noAdvisoryLocks() async throws {
        try await TestDatabase.with { db in
            let functions: Int64 = try await db.scalar(
                """
                SELECT count(*)::bigint FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                WHERE n.nspname = 'securepush' AND p.prosrc ~ 'pg_(try_)?advisory'
                """)
            #expect(functions == 0)
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let sources = root.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        for file in files where file.pathExtension == "swift" && file.lastPathComponent != "Migrator.swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(!text.contains("pg_advisory") && !text.contains("pg_try_advisory"), "\(file.lastPathComponent)")
        }
    }

    @Test("a producer holding the migrators' advisory key does not stop migrate on an existing schema")
    func migrateIgnoresTheAdvisoryKey() async throws {
        try await TestDatabase.with { db in
            try await Self.withProducerConnection(db) { producer in
                try await producer.query("SELECT pg_advisory_lock(\(Migrator.lockKey))", logger: db.logger)
                let applied = try await withDeadline(.seconds(20)) {
                    try await Migrator.securePush(try Migration.bundled()).migrate(client: db.client, logger: db.logger)
                }
                #expect(applied.isEmpty, "nothing left to apply, and not stopped by the key")
            }
        }
    }
}
