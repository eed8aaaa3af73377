import Foundation
import PostgresNIO
import SecurePushCore
import SecurePushPostgres
import SecurePushStore
import SecurePushTestSupport
import Testing

/// A deployed database is upgraded in place: created at a released set of migrations, filled with what a live
/// system holds, then migrated to this build's head. Nothing it held may be lost or changed, and this build's queue
/// must carry on from it (claim what was pending, finish what an older dispatcher had claimed).
@Suite("Upgrades")
struct UpgradeTests {
    /// The migrations `sql/released` lists, in order.
    static func released() throws -> [String] {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("sql/released")
        return try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
            .filter { !$0.hasPrefix("#") }
            .compactMap { $0.split(separator: " ", omittingEmptySubsequences: true).last.map(String.init) }
    }

    /// The start points: the last release, and an older one (before gathered reads and badge rows, migration 010) so
    /// the path a long-running deployment takes is upgraded too.
    static let startPoints: [String] = ["last release", "010"]

    @Test(
        "a database at a released schema, with devices, pending and claimed deliveries and read and unread notifications, upgrades to head losing nothing",
        arguments: startPoints)
    func upgradeKeepsEverything(from start: String) async throws {
        let all = try Migration.bundled()
        let released = try Self.released()
        #expect(Array(all.prefix(released.count).map(\.name)) == released, "the build embeds every released migration, in order")
        let initial = start == "last release" ? Array(all.prefix(released.count)) : all.filter { $0.version <= Int(start)! }
        try await TestDatabase.withEmpty { db in
            _ = try await Migrator.securePush(initial).migrate(client: db.client, logger: db.logger)
            let oldLease = try await Self.fill(db)
            let before = try await Self.contents(db)
            #expect(before.count == 4 && before.allSatisfy { !$0.value.isEmpty }, "the fixture wrote every table")

            let applied = try await Migrator.securePush(all).migrate(client: db.client, logger: db.logger)
            #expect(applied == all.dropFirst(initial.count).map(\.name))
            let after = try await Self.contents(db)
            for table in before.keys.sorted() {
                #expect(after[table] == before[table], "\(table) changed across the upgrade from \(initial.last!.name)")
            }

            // This build's queue carries on: the badge counts the unread notifications, the pending deliveries are
            // claimed, and the ones an older dispatcher claimed are finished under that dispatcher's lease.
            let queue = PostgresDeliveryQueue(client: db.client, logger: db.logger, unreadBadge: true)
            let batch = try await queue.claim(limit: 100, platforms: [.simulated], lease: .seconds(30), worker: UUID())
            #expect(batch.deliveries.count == Self.pendingDeliveries)
            #expect(Set(batch.deliveries.compactMap(\.push.badge)) == [Self.unreadPerUser])
            let finished = try await queue.complete(
                before["claimed"]!.map { DeliveryCompletion(deliveryID: UUID(uuidString: $0)!, outcome: .sent(messageID: nil)) },
                leaseToken: oldLease)
            #expect(finished == Self.claimedDeliveries)
        }
    }

    static let users = ["ada", "grace", "linus"]
    /// Per user: notifications, of which the first `readPerUser` are read.
    static let notificationsPerUser = 4
    static let readPerUser = 1
    static let unreadPerUser = notificationsPerUser - readPerUser
    static let devicesPerUser = 2
    static let claimedDeliveries = 5
    static let pendingDeliveries = users.count * notificationsPerUser * devicesPerUser - claimedDeliveries

    /// Writes the fixture with statements the released schemas all accept; returns the claimed deliveries' lease.
    static func fill(_ db: TestDatabase) async throws -> UUID {
        let lease = UUID()
        try await db.execute(
            """
            INSERT INTO securepush.devices (user_id, platform, token, secret_hash)
            SELECT u, 'simulated', u || '-token-' || d, sha256(convert_to(u || d, 'UTF8'))
            FROM unnest(\(users)::text[]) u, generate_series(1, \(devicesPerUser)) d
            """)
        try await db.execute(
            """
            INSERT INTO securepush.notifications (user_id, payload, created_at)
            SELECT u, jsonb_build_object('title', 'Statement ' || n), now() - make_interval(mins => 10 - n::integer)
            FROM unnest(\(users)::text[]) u, generate_series(1, \(notificationsPerUser)) n
            """)
        // From 033 on the dispatchers fan out what producers committed: as one would before the upgrade.
        try await db.execute(
            """
            DO $$ BEGIN
                IF to_regprocedure('securepush.fan_out_queued(integer)') IS NOT NULL THEN PERFORM securepush.fan_out_queued(1000); END IF;
            END $$
            """)
        try await db.execute(
            """
            UPDATE securepush.notifications n SET read_at = now(),
                read_by_device = (SELECT id FROM securepush.devices d WHERE d.user_id = n.user_id ORDER BY token LIMIT 1)
            WHERE n.id IN (SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY user_id ORDER BY created_at) AS k
                                           FROM securepush.notifications) ranked WHERE k <= \(readPerUser))
            """)
        try await db.execute(
            """
            UPDATE securepush.deliveries SET state = 'claimed', lease_token = \(lease), claimed_by = \(UUID()),
                lease_expires_at = now() + interval '5 minutes', attempts = 1
            WHERE id IN (SELECT id FROM securepush.deliveries ORDER BY id LIMIT \(claimedDeliveries))
            """)
        return lease
    }

    /// Each table's rows as text, in a stable order; `claimed` lists the claimed deliveries' ids.
    static func contents(_ db: TestDatabase) async throws -> [String: [String]] {
        let queries: [(String, PostgresQuery)] = [
            (
                "devices",
                "SELECT concat_ws('|', id, user_id, platform, token, encode(secret_hash, 'hex'), active) FROM securepush.devices ORDER BY id"
            ),
            (
                "notifications",
                "SELECT concat_ws('|', id, user_id, payload::text, created_at, expires_at, read_at, read_by_device) FROM securepush.notifications ORDER BY id"
            ),
            (
                "deliveries",
                "SELECT concat_ws('|', id, notification_id, device_id, state, lease_token, attempts, expires_at) FROM securepush.deliveries ORDER BY id"
            ),
            ("claimed", "SELECT id::text FROM securepush.deliveries WHERE state = 'claimed' ORDER BY id"),
        ]
        var contents: [String: [String]] = [:]
        for (table, query) in queries {
            contents[table] = try await db.client.query(query, logger: db.logger).collect().map { try $0.decode(String.self) }
        }
        return contents
    }
}
