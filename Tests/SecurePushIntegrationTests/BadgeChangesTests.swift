import Foundation
import PostgresNIO
import SecurePushCore
import SecurePushDispatcher
import SecurePushPostgres
import SecurePushStore
import SecurePushTestSupport
import Testing

@Suite("Unread badge rows")
struct BadgeChangesTests {
    static let users = ["ada", "ben", "cy", "dee"]

    /// Each user's badge from `securepush.unread_badges` (all the users in one call, as a claim asks) beside the
    /// count it stands for, as "user=badge/count": the unread, unexpired notifications that have been fanned out
    /// (one still in `securepush.fan_out_queue` has not been pushed yet and counts from its fan-out on). Each
    /// user's `securepush.unread_badge` (one user, as producers ask) must say the same.
    static func badges(_ db: TestDatabase) async throws -> [String] {
        var together: [String: Int64] = [:]
        for try await (user, badge) in try await db.client.query(
            "SELECT user_id, badge FROM securepush.unread_badges(\(users), 999)", logger: db.logger
        ).decode((String, Int64).self) {
            together[user] = badge
        }
        var lines: [String] = []
        for user in users {
            let badge = together[user] ?? -1
            let alone: Int64 = try await db.scalar("SELECT securepush.unread_badge(\(user), 999)")
            #expect(alone == badge, "\(user): unread_badge \(alone), unread_badges \(badge)")
            let count: Int64 = try await db.scalar(
                """
                SELECT count(*)::bigint FROM securepush.notifications n
                WHERE user_id = \(user) AND read_at IS NULL AND expires_at > now()
                  AND NOT EXISTS (SELECT 1 FROM securepush.fan_out_queue q WHERE q.notification_id = n.id)
                """)
            lines.append("\(user)=\(badge)/\(count)")
        }
        return lines
    }

    static func expectExact(_ db: TestDatabase, _ step: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        for line in try await badges(db) {
            let parts = line.split(separator: "=")[1].split(separator: "/")
            #expect(parts[0] == parts[1], "\(step): \(line) (badge/count)", sourceLocation: sourceLocation)
        }
    }

    @Test("the badge equals the unread, unexpired count through inserts, reads, expiry changes, deletes and compaction")
    func exactThroughEveryChange() async throws {
        try await TestDatabase.with { db in
            for user in Self.users { try await db.insertDevice(user: user, token: "\(user)-phone") }
            // One statement for many users and many notifications each, as a broadcast does.
            try await db.execute(
                """
                INSERT INTO securepush.notifications (user_id, payload)
                SELECT u, '{}' FROM unnest(\(Self.users)::text[]) u, generate_series(1, 5)
                """)
            #expect(try await db.fanOut() == 20)
            // These stay queued through the reads, updates and deletes below, fanned out at the end.
            for user in Self.users.prefix(2) { _ = try await db.enqueue(user: user, payload: "{}") }
            _ = try await db.enqueue(user: "cy", payload: "{}", ttl: "1 hour")
            try await Self.expectExact(db, "after the inserts")
            #expect(try await Self.badges(db).first == "ada=5/5")

            // Reads, one of them of a row already read (no change), in one statement.
            try await db.execute(
                """
                UPDATE securepush.notifications SET read_at = coalesce(read_at, now())
                WHERE id IN (SELECT id FROM securepush.notifications WHERE user_id IN ('ada', 'ben') ORDER BY created_at LIMIT 4)
                """)
            try await db.execute(
                "UPDATE securepush.notifications SET read_at = coalesce(read_at, now()) WHERE user_id = 'ada'")
            try await Self.expectExact(db, "after the reads")
            #expect(try await Self.badges(db).first == "ada=0/0")

            // Unread again, moved to another user, expiry moved into the past, payload purged (no change).
            try await db.execute(
                "UPDATE securepush.notifications SET read_at = NULL WHERE id = (SELECT min(id::text)::uuid FROM securepush.notifications WHERE user_id = 'ada')"
            )
            try await db.execute(
                "UPDATE securepush.notifications SET user_id = 'dee' WHERE id = (SELECT min(id::text)::uuid FROM securepush.notifications WHERE user_id = 'ben' AND read_at IS NULL)"
            )
            try await db.execute(
                "UPDATE securepush.notifications SET expires_at = now() - interval '1 second' WHERE id = (SELECT min(id::text)::uuid FROM securepush.notifications WHERE user_id = 'cy')"
            )
            try await db.execute(
                "UPDATE securepush.notifications SET payload = NULL, purged_at = now() WHERE user_id = 'ada' AND read_at IS NOT NULL")
            try await Self.expectExact(db, "after the other updates")

            // Deletes of unread and of read rows.
            try await db.execute(
                "DELETE FROM securepush.notifications WHERE id IN (SELECT id FROM securepush.notifications WHERE user_id = 'dee' LIMIT 3)")
            try await db.execute("DELETE FROM securepush.notifications WHERE user_id = 'ada' AND read_at IS NOT NULL")
            try await Self.expectExact(db, "after the deletes")
            try await db.fanOut()
            try await Self.expectExact(db, "after the fan-out of those changed while queued")

            let before = try await Self.badges(db)
            let rowsBefore: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.badge_changes")
            let maintenance = PostgresQueueMaintenance(client: db.client, logger: db.logger)
            // Two users per call: the cursor walks them in order and says when it is through.
            #expect(try await maintenance.compactBadges(after: nil, users: 2) == "ben")
            #expect(try await maintenance.compactBadges(after: "ben", users: 2) == "dee")
            #expect(try await maintenance.compactBadges(after: "dee", users: 2) == nil)
            #expect(try await Self.badges(db) == before, "compaction changes no badge")
            let effective: Int64 = try await db.scalar(
                """
                SELECT max(n)::bigint FROM (
                    SELECT count(*) AS n FROM securepush.badge_changes WHERE effective_at <= now() GROUP BY user_id) c
                """)
            #expect(effective <= 2, "at most two rows in effect per user after compaction (051: more fold into a base row)")
            let ended: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.badge_changes WHERE ends_at <= now()")
            #expect(ended == 0, "rows that ended count no more and go")
            let rowsAfter: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.badge_changes")
            #expect(rowsAfter < rowsBefore, "\(rowsBefore) rows before compaction, \(rowsAfter) after")
            let zero: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.badge_changes WHERE change = 0")
            #expect(zero == 0)
        }
    }

    @Test("a notification leaves the badge when it expires, with nothing written at that moment")
    func expiryWithoutWrites() async throws {
        try await TestDatabase.with { db in
            _ = try await db.enqueue(user: "ada", payload: "{}", ttl: "1 hour")
            _ = try await db.enqueue(user: "ada", payload: "{}", ttl: "2 seconds")
            #expect(try await db.fanOut() == 2)
            #expect(try await Self.badges(db).first == "ada=2/2")
            let rows: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.badge_changes")
            try await db.eventually("the short notification expired") {
                try await db.scalar("SELECT count(*) = 1 FROM securepush.notifications WHERE expires_at <= now()")
            }
            #expect(try await Self.badges(db).first == "ada=1/1")
            #expect(try await db.scalar("SELECT count(*)::bigint FROM securepush.badge_changes") == rows)
            // Deleting the expired row (as pruning does) writes nothing and changes nothing.
            try await db.execute("DELETE FROM securepush.notifications WHERE expires_at <= now()")
            #expect(try await Self.badges(db).first == "ada=1/1")
            #expect(try await db.scalar("SELECT count(*)::bigint FROM securepush.badge_changes") == rows)
        }
    }

    @Test("after compaction a user's badge is one row to walk, and notifications still leave it at their expiry")
    func compactedWalkAndExpiry() async throws {
        try await TestDatabase.with { db in
            for _ in 0..<30 { _ = try await db.enqueue(user: "ada", payload: "{}", ttl: "1 hour") }
            _ = try await db.enqueue(user: "ada", payload: "{}", ttl: "2 seconds")
            #expect(try await db.fanOut() == 31)
            // One read: its row undoes that notification's interval.
            try await db.execute(
                """
                UPDATE securepush.notifications SET read_at = now()
                WHERE id = (SELECT id FROM securepush.notifications WHERE expires_at > now() + interval '1 minute' LIMIT 1)
                """)
            #expect(try await Self.badges(db).first == "ada=30/30")
            let maintenance = PostgresQueueMaintenance(client: db.client, logger: db.logger)
            #expect(try await maintenance.compactBadges(after: nil, users: 10) == "ada")
            #expect(try await Self.badges(db).first == "ada=30/30")
            let walked: Int64 = try await db.scalar(
                "SELECT count(*)::bigint FROM securepush.badge_changes WHERE user_id = 'ada' AND effective_at <= now()")
            #expect(walked == 1, "the claim's walk is the base row, not one row per unread notification")
            // The read notification's two steps at its end cancel: 30 ends left in the future, one step each.
            let steps: Int64 = try await db.scalar(
                "SELECT count(*)::bigint FROM securepush.badge_changes WHERE user_id = 'ada' AND effective_at > now()")
            #expect(steps == 30)
            let rows: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.badge_changes")
            try await db.eventually("the short notification expired") {
                try await db.scalar("SELECT count(*) = 1 FROM securepush.notifications WHERE expires_at <= now()")
            }
            #expect(try await Self.badges(db).first == "ada=29/29", "its step took effect, nothing written")
            #expect(try await db.scalar("SELECT count(*)::bigint FROM securepush.badge_changes") == rows)
            // The base and the step that came due: a walk of two rows, which a fold would not shorten.
            #expect(try await db.scalar("SELECT count(*)::bigint FROM securepush.badge_changes WHERE effective_at <= now()") == 2)
            // A round with nothing to fold writes nothing.
            let places = "SELECT string_agg(ctid::text, ' ' ORDER BY ctid) FROM securepush.badge_changes"
            let before: String = try await db.scalar(PostgresQuery(unsafeSQL: places))
            #expect(try await maintenance.compactBadges(after: nil, users: 10) == "ada")
            #expect(try await db.scalar(PostgresQuery(unsafeSQL: places)) == before, "no row rewritten")
            // One more unread notification makes three rows in effect: the next round folds them into the base.
            _ = try await db.enqueue(user: "ada", payload: "{}", ttl: "1 hour")
            #expect(try await db.fanOut() == 1)
            #expect(try await maintenance.compactBadges(after: nil, users: 10) == "ada")
            #expect(try await Self.badges(db).first == "ada=30/30")
            #expect(try await db.scalar("SELECT count(*)::bigint FROM securepush.badge_changes WHERE effective_at <= now()") == 1)
        }
    }

    @Test("a dispatcher folds the badge rows of the users it pushed to, every fold interval, and nobody else's")
    func foldedByMaintenance() async throws {
        try await TestDatabase.with { db in
            for user in ["ada", "ben"] { try await db.insertDevice(user: user, token: "\(user)-phone") }
            let queue = PostgresDeliveryQueue(client: db.client, logger: db.logger, unreadBadge: true)
            let recipients = BadgeRecipients()
            // What a dispatcher's lane does: claim (the fan-out writes the badge rows) and note the recipients.
            let claim: @Sendable () async throws -> Void = {
                let batch = try await queue.claim(limit: 100, platforms: [.simulated], lease: .seconds(30), worker: UUID())
                recipients.record(batch)
            }
            for _ in 0..<20 { _ = try await db.enqueue(user: "ada", payload: "{}") }
            try await claim()
            // ben's rows were not pushed by this dispatcher: a fold of its recipients leaves them to the sweep.
            for _ in 0..<3 { _ = try await db.enqueue(user: "ben", payload: "{}") }
            #expect(try await db.fanOut() == 3)
            let walk: PostgresQuery = "SELECT count(*)::bigint FROM securepush.badge_changes WHERE effective_at <= now() AND user_id = 'ada'"
            let bens: PostgresQuery = "SELECT count(*)::bigint FROM securepush.badge_changes WHERE effective_at <= now() AND user_id = 'ben'"
            #expect(try await db.scalar(walk, as: Int64.self) == 20, "one row per notification before a fold")
            var configuration = DispatcherConfiguration()
            configuration.maintenanceInterval = .seconds(3600)
            configuration.badgeFoldInterval = .milliseconds(100)
            let service = MaintenanceService(
                maintenance: PostgresQueueMaintenance(client: db.client, logger: db.logger), configuration: configuration,
                signal: WakeSignal(), recipients: recipients, logger: db.logger)
            #expect(try await service.foldBadges() == 1)
            #expect(try await db.scalar(walk, as: Int64.self) == 1)
            #expect(try await db.scalar(bens, as: Int64.self) == 3)
            #expect(try await service.foldBadges() == 0, "nobody pushed to since")
            // A fold that fails (here: past its deadline behind a lock) keeps its users for its next round.
            var impatient = configuration
            impatient.databaseTimeout = .milliseconds(200)
            let waiting = BadgeRecipients()
            waiting.restore(["ada", "ben"])
            let blocked = MaintenanceService(
                maintenance: PostgresQueueMaintenance(client: db.client, logger: db.logger), configuration: impatient,
                signal: WakeSignal(), recipients: waiting, logger: db.logger)
            try await APIOperationsTests.whileLocked(db, "LOCK TABLE securepush.badge_changes IN ACCESS EXCLUSIVE MODE") {
                await #expect(throws: DeadlineExceeded.self) { try await blocked.foldBadges() }
            }
            #expect(waiting.take() == ["ada", "ben"])
            #expect(try await Self.badges(db).prefix(2) == ["ada=20/20", "ben=3/3"])
            // The service's loop: its first maintenance round sweeps every user; later folds come on the fold's
            // interval (the maintenance interval is an hour).
            let running = Task { try await service.run() }
            defer { running.cancel() }
            try await db.eventually("the sweep folded ben", count: bens, is: 1)
            for _ in 0..<5 { _ = try await db.enqueue(user: "ada", payload: "{}") }
            try await claim()
            try await db.eventually("the next fold", count: walk, is: 1)
            #expect(try await Self.badges(db).prefix(2) == ["ada=25/25", "ben=3/3"])
        }
    }

    @Test("producers, readers and compactions at once leave every badge exact")
    func concurrentWriters() async throws {
        try await TestDatabase.with { db in
            let maintenance = PostgresQueueMaintenance(client: db.client, logger: db.logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for user in Self.users {
                    group.addTask {
                        for _ in 0..<30 { _ = try await db.enqueue(user: user, payload: "{}") }
                    }
                    group.addTask {
                        for _ in 0..<20 {
                            try await db.execute(
                                """
                                UPDATE securepush.notifications SET read_at = now()
                                WHERE id = (SELECT id FROM securepush.notifications WHERE user_id = \(user) AND read_at IS NULL LIMIT 1)
                                """)
                        }
                    }
                }
                // A dispatcher's fan-out, racing the readers for notifications just queued.
                group.addTask {
                    for _ in 0..<200 { _ = try await db.fanOut() }
                }
                for _ in 0..<2 {
                    group.addTask {
                        for _ in 0..<20 {
                            var cursor: String? = nil
                            repeat { cursor = try await maintenance.compactBadges(after: cursor, users: 1) } while cursor != nil
                        }
                    }
                }
                try await group.waitForAll()
            }
            try await db.fanOut()
            try await Self.expectExact(db, "after the concurrent run")
            let reads: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.notifications WHERE read_at IS NOT NULL")
            #expect(reads > 0, "the readers read")
        }
    }

    @Test("a database with notifications migrated across 014 gets every user's badge rows")
    func backfill() async throws {
        try await TestDatabase.withEmpty { db in
            let all = try Migration.bundled()
            _ = try await Migrator.securePush(all.filter { $0.version < 14 }).migrate(client: db.client, logger: db.logger)
            try await db.execute(
                """
                INSERT INTO securepush.notifications (user_id, payload, expires_at, read_at)
                SELECT u, '{}', now() + (g || ' hours')::interval, CASE WHEN g % 3 = 0 THEN now() END
                FROM unnest(\(Self.users)::text[]) u, generate_series(1, 7) g
                """)
            try await db.execute(
                "INSERT INTO securepush.notifications (user_id, payload, expires_at) VALUES ('ada', '{}', now() - interval '1 minute')")
            _ = try await Migrator.securePush(all).migrate(client: db.client, logger: db.logger)
            try await Self.expectExact(db, "after the migration")
            #expect(try await Self.badges(db).first == "ada=5/5")
        }
    }
}
