import Foundation
import Logging
import PostgresNIO
import SecurePushCore
import SecurePushPostgres

/// Rescue, expiry and pruning on PostgreSQL. Every statement is safe to run from many processes at once.
///
/// Each picks its batch of ids first (`id = ANY (ARRAY(SELECT ... LIMIT n))`, one evaluation) and then
/// touches those rows by primary key. The `id IN (SELECT ... LIMIT n)` form let the planner, with
/// statistics stale after a bulk insert, rescan the whole subquery for every row: one expiry statement
/// ran for minutes at 100% CPU and stalled the drain in `ops/bench`.
public struct PostgresQueueMaintenance: QueueMaintenance {
    let database: StoreDatabase

    /// Creates the maintenance store on an injected client.
    public init(client: any DatabaseClient, logger: Logger) {
        self.database = StoreDatabase(client: client, logger: logger)
    }

    public func rescueExpiredLeases() async throws -> Int {
        // Claimed rows and leases (securepush.claims) past their end (sql/routines/rescue_claims.sql).
        try await database.count("SELECT securepush.rescue_claims()")
    }

    public func promoteDueDeliveries(batchSize: Int) async throws -> Int {
        try await database.count("SELECT securepush.promote_due_deliveries(\(batchSize)::integer)::bigint")
    }

    public func rescheduleRound(users: Int, notifications: Int) async throws -> (moved: Int, more: Bool) {
        let rows = try await database.query(
            "SELECT r.moved::bigint, r.more FROM securepush.reschedule_round(\(Int32(clamping: users)), \(Int32(clamping: notifications))) r"
        ).collect()
        let (moved, more) = try rows[0].decode((Int64, Bool).self)
        return (Int(moved), more)
    }

    public func expirePending() async throws -> Int {
        let (expired, pending, scheduled) = (DeliveryOutcome.Kind.expired, DeliveryState.pending, DeliveryState.scheduled)
        return try await database.count(
            """
            WITH gone AS (
                DELETE FROM securepush.deliveries
                WHERE id = ANY (ARRAY(
                    SELECT id FROM securepush.deliveries
                    WHERE state IN (\(pending), \(scheduled)) AND expires_at <= now()
                    LIMIT 10000
                    FOR UPDATE SKIP LOCKED
                ))
                RETURNING id, notification_id, device_id, platform, attempts, created_at, kind
            ),
            logged AS (
                INSERT INTO securepush.delivery_log (id, notification_id, device_id, platform, outcome, attempts, last_error, created_at, kind)
                SELECT id, notification_id, device_id, platform, \(expired), attempts, 'notification expired', created_at, kind FROM gone
            )
            SELECT count(*)::bigint FROM gone
            """
        )
    }

    public func prune(retention: Duration, batchSize: Int) async throws -> Int {
        let milliseconds = retention.wholeMilliseconds
        let history = try await deleteOldest(from: "delivery_log", by: "finished_at", olderThan: milliseconds, batchSize: batchSize)
        let events = try await database.count(
            "SELECT securepush.prune_delivery_events(\(milliseconds) * interval '1 millisecond', \(Int32(clamping: batchSize)))")
        let notifications = try await deleteOldest(from: "notifications", by: "expires_at", olderThan: milliseconds, batchSize: batchSize)
        let dispatchers = try await database.count(
            """
            WITH gone AS (
                DELETE FROM securepush.dispatchers
                WHERE coalesce(stopped_at, last_seen_at) < now() - \(milliseconds) * interval '1 millisecond'
                RETURNING 1
            )
            SELECT count(*)::bigint FROM gone
            """
        )
        // Throttle rows go once idle for a day and unblocked (the audit log has a retention of its own).
        let throttles = try await database.count("SELECT securepush.prune_auth_failures(interval '1 day')::bigint")
        return history + events + notifications + dispatchers + throttles
    }

    /// Deletes at most `batchSize` rows of `securepush.<table>` whose `column` is older than `milliseconds`
    /// (table and column are this file's constants, never input).
    private func deleteOldest(from table: String, by column: String, olderThan milliseconds: Int64, batchSize: Int) async throws -> Int {
        try await database.count(
            """
            WITH gone AS (
                DELETE FROM securepush.\(unescaped: table)
                WHERE id = ANY (ARRAY(
                    SELECT id FROM securepush.\(unescaped: table)
                    WHERE \(unescaped: column) < now() - \(milliseconds) * interval '1 millisecond'
                    LIMIT \(batchSize)
                ))
                RETURNING 1
            )
            SELECT count(*)::bigint FROM gone
            """
        )
    }

    public func retireStaleDevices(staleAfter: Duration) async throws -> Int {
        try await database.count("SELECT securepush.retire_stale_devices(\(staleAfter.wholeMilliseconds) * interval '1 millisecond')::bigint")
    }

    public func deleteRetiredDevices(retention: Duration) async throws -> Int {
        try await database.count("SELECT securepush.delete_retired_devices(\(retention.wholeMilliseconds) * interval '1 millisecond')::bigint")
    }

    public func pruneAuditLog(retention: Duration) async throws -> Int {
        try await database.count("SELECT securepush.prune_audit_log(\(retention.wholeMilliseconds) * interval '1 millisecond')::bigint")
    }

    public func compactBadges(after: String?, users: Int) async throws -> String? {
        let rows = try await database.query("SELECT securepush.compact_badge_changes(\(after), \(users)::integer)").collect()
        return try rows.first?.decode(String?.self)
    }

    public func foldBadges(users: [String]) async throws -> Int {
        try await database.count("SELECT securepush.fold_badges(\(users)::text[])::bigint")
    }
}
