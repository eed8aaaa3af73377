import Foundation
import PostgresNIO
import SecurePushCore
import SecurePushStore
import SecurePushTestSupport
import Testing

/// A broadcast is a bulk insert nobody has analysed yet: the claim must walk its index in order and stop
/// at the limit whatever the planner's statistics say. Counted in index tuples read (the transaction's own
/// `pg_stat_xact_*` figures), which do not move with the machine's speed.
@Suite("The claim's plan without statistics")
struct ClaimPlanTests {
    @Test("a claim of 50 from 20,000 fresh, never-analysed deliveries fetches about 100 rows and scans no table")
    func claimWithoutStatistics() async throws {
        try await TestDatabase.with { db in
            // As a fresh installation's tables: no statistics, not even a row count (reltuples -1).
            try await db.execute(
                "TRUNCATE securepush.deliveries, securepush.delivery_log, securepush.fetches, securepush.notifications, securepush.devices")
            try await db.execute("ALTER TABLE securepush.deliveries SET (autovacuum_enabled = false)")
            try await db.execute("ALTER TABLE securepush.notifications SET (autovacuum_enabled = false)")
            try await db.execute(
                "INSERT INTO securepush.devices (user_id, platform, token) SELECT 'plan-' || g, 'simulated', 'plan-' || g FROM generate_series(1, 20000) g"
            )
            try await db.execute(
                "INSERT INTO securepush.notifications (user_id, payload) SELECT 'plan-' || g, '{}'::jsonb FROM generate_series(1, 20000) g")
            // Fanned out as the dispatchers do it, in batches (their plans hold without statistics too).
            #expect(try await db.fanOut() == 20000)
            let analysed: Int64 = try await db.scalar(
                """
                SELECT count(*)::bigint FROM pg_stat_user_tables
                WHERE schemaname = 'securepush' AND relname IN ('deliveries', 'notifications')
                  AND (last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL)
                """)
            #expect(analysed == 0, "the tables have no statistics")
            try await db.client.withConnection { connection in
                // Rows fetched through indexes and read by sequential scans, per table, as this backend counts them
                // (its counts not yet flushed, which may include earlier transactions: the claim's are the difference).
                @Sendable func counts() async throws -> [String: (fetched: Int64, sequential: Int64)] {
                    var counts: [String: (fetched: Int64, sequential: Int64)] = [:]
                    for try await (table, index, seq) in try await connection.query(
                        """
                        SELECT relname, coalesce(idx_tup_fetch, 0)::bigint, coalesce(seq_tup_read, 0)::bigint FROM pg_stat_xact_user_tables
                        WHERE schemaname = 'securepush' AND relname IN ('deliveries', 'notifications', 'devices')
                        """,
                        logger: db.logger
                    ).decode((String, Int64, Int64).self) {
                        counts[table] = (index, seq)
                    }
                    return counts
                }
                try await connection.query("BEGIN", logger: db.logger)
                let before = try await counts()
                let claimed = try await connection.query(
                    "SELECT count(*)::bigint, count(unread)::bigint FROM securepush.claim_deliveries(50, '{simulated}', 30000, \(UUID()), \(UUID()), true, \(Int32(PostgresDeliveryQueue.badgeLimit)), true)",
                    logger: db.logger
                ).collect()[0].decode((Int64, Int64).self)
                let after = try await counts()
                try await connection.query("ROLLBACK", logger: db.logger)
                var fetched: [String: Int64] = [:]
                var sequential: Int64 = 0
                for (table, count) in after {
                    fetched[table] = count.fetched - (before[table]?.fetched ?? 0)
                    sequential += count.sequential - (before[table]?.sequential ?? 0)
                }
                #expect(claimed.0 == 50 && claimed.1 == 50, "50 claimed, each with its badge")
                // 50 from the claim's index walk and 50 by the update's key lookups; a sort of every pending row reads 20,000.
                #expect((fetched["deliveries"] ?? .max) <= 200, "the claim fetched \(fetched["deliveries"] ?? -1) deliveries")
                // The badges, and (sealed previews on) each claimed push's preview by primary key: 50 more.
                #expect((fetched["notifications"] ?? .max) <= 150, "the badges and previews fetched \(fetched["notifications"] ?? -1) notifications")
                #expect(sequential == 0, "\(sequential) rows read by sequential scans")
            }
        }
    }

    @Test("a claim's plans are made once per session: made on an empty table, they still find a new notification by its key among 20,000")
    func plansMadeOnAnEmptyTable() async throws {
        try await TestDatabase.with { db in
            try await db.execute(
                "TRUNCATE securepush.deliveries, securepush.delivery_log, securepush.fetches, securepush.notifications, securepush.devices")
            try await db.execute("ALTER TABLE securepush.notifications SET (autovacuum_enabled = false)")
            try await db.execute(
                "INSERT INTO securepush.devices (user_id, platform, token) SELECT 'once-' || g, 'simulated', 'once-' || g FROM generate_series(1, 100) g"
            )
            try await db.client.withConnection { connection in
                @Sendable func claim() async throws -> Int64 {
                    try await connection.query(
                        "SELECT count(*)::bigint FROM securepush.claim_deliveries(16, '{simulated}', 30000, \(UUID()), \(UUID()), true, 999, false)",
                        logger: db.logger
                    ).collect()[0].decode(Int64.self)
                }
                // Claims on the empty table, one notification each: this session's plans are made now (generic ones
                // at once since 044; before, after five calls), while the planner sees a table with no rows.
                for _ in 0..<6 {
                    _ = try await db.enqueue(user: "once-1", payload: "{}")
                    #expect(try await claim() == 1)
                }
                // 20,000 unexpired notifications, fanned out by another session; then one new one.
                try await db.execute(
                    "INSERT INTO securepush.notifications (user_id, payload) SELECT 'once-' || (g % 100 + 1), '{}'::jsonb FROM generate_series(1, 20000) g"
                )
                _ = try await db.fanOut()
                // Their deliveries are not the point: the claim below has only the new notification to fan out.
                try await db.execute("DELETE FROM securepush.deliveries")
                _ = try await db.enqueue(user: "once-2", payload: "{}")
                @Sendable func fetched() async throws -> Int64 {
                    try await connection.query(
                        """
                        SELECT coalesce(sum(coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0)), 0)::bigint FROM pg_stat_xact_user_tables
                        WHERE schemaname = 'securepush' AND relname = 'notifications'
                        """, logger: db.logger
                    ).collect()[0].decode(Int64.self)
                }
                try await connection.query("BEGIN", logger: db.logger)
                let before = try await fetched()
                #expect(try await claim() == 1)
                let read = try await fetched() - before
                try await connection.query("ROLLBACK", logger: db.logger)
                // The new notification by its key in each of the fan-out's statements; a scan of the unexpired ones reads 20,000.
                #expect(read <= 20, "the claim read \(read) notifications to fan out one")
            }
        }
    }
}
