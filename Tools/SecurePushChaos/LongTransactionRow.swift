import Foundation
import PostgresNIO

/// Row 4: a transaction holding an xid (`BEGIN; SELECT txid_current();`) open for a while under load, so
/// no dead row of the queue can be vacuumed meanwhile. Reported: the claim statement's latency before,
/// during and after (from `pg_stat_statements`, reset at each phase) and the dead tuples of
/// `securepush.deliveries`. Nothing may be lost.
enum LongTransactionRow {
    /// One phase's claim statistics.
    struct ClaimStats: Sendable {
        var calls: Int64
        var meanMilliseconds: Double
        var maxMilliseconds: Double

        var text: String { String(format: "%lld claims, mean %.2f ms, max %.1f ms", calls, meanMilliseconds, maxMilliseconds) }
    }

    static func plan(_ options: ChaosOptions) -> RowPlan {
        RowPlan(warmUp: .seconds(1), tail: .seconds(1)) { context in
            let (database, report) = (context.database, context.report)
            let hold = options.quick ? 8.0 : 20.0
            let statements = (try? await database.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")) != nil
            if !statements { report.figure("claim latency", "n/a (pg_stat_statements is not loaded)") }

            func phase(_ name: String, _ duration: Double) async throws -> ClaimStats? {
                if statements { try await database.execute("SELECT pg_stat_statements_reset()") }
                try await context.hold(.seconds(duration))
                return statements ? try await claimStats(database) : nil
            }

            let before = try await phase("before", 3)
            let deadBefore = try await deadTuples(database)
            let holder = try await database.connect()
            _ = try await holder.query("BEGIN", logger: database.logger).collect()
            _ = try await holder.query("SELECT txid_current()", logger: database.logger).collect()
            let during = try await phase("during", hold)
            let deadDuring = try await deadTuples(database)
            _ = try await holder.query("COMMIT", logger: database.logger).collect()
            try await holder.close()
            let after = try await phase("after", 3)
            let deadAfter = try await deadTuples(database)

            report.figure("transaction held", seconds(hold))
            if let before, let during, let after {
                report.figure("claim before", before.text)
                report.figure("claim during", during.text)
                report.figure("claim after", after.text)
                // The figures are of the dispatcher's claim statement: found in every phase, or the match is stale.
                report.check("the claim statement was found in every phase", [before, during, after].allSatisfy { $0.calls > 0 })
            }
            report.figure("deliveries n_dead_tup before/at end of hold/after", "\(deadBefore)/\(deadDuring)/\(deadAfter)")
        }
    }

    /// The claim statement's calls (the call of `securepush.claim_deliveries`), mean and max time since the
    /// last reset, in this database.
    static func claimStats(_ database: ChaosDatabase) async throws -> ClaimStats {
        try await database.with { connection in
            let rows = try await connection.query(
                """
                SELECT coalesce(sum(calls), 0)::int8, coalesce(sum(total_exec_time), 0)::float8, coalesce(max(max_exec_time), 0)::float8
                FROM pg_stat_statements
                WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query LIKE '%securepush.claim_deliveries(%'
                """, logger: database.logger)
            for try await (calls, total, maximum) in rows.decode((Int64, Double, Double).self) {
                return ClaimStats(calls: calls, meanMilliseconds: calls > 0 ? total / Double(calls) : 0, maxMilliseconds: maximum)
            }
            throw ChaosError("pg_stat_statements returned no row")
        }
    }

    /// `n_dead_tup` of `securepush.deliveries` (the statistics lag behind by up to a second or so).
    static func deadTuples(_ database: ChaosDatabase) async throws -> Int64 {
        try await database.scalar(
            "SELECT coalesce(n_dead_tup, 0)::int8 FROM pg_stat_user_tables WHERE schemaname = 'securepush' AND relname = 'deliveries'",
            as: Int64.self)
    }
}
