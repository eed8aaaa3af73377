import Foundation

/// The seam to the delivery queue (PostgreSQL in production and in the tests).
public protocol DeliveryQueue: Sendable {
    /// Claims up to `limit` runnable deliveries of the given platforms as one lease.
    func claim(limit: Int, platforms: [Platform], lease: Duration, worker: UUID) async throws -> ClaimedBatch

    /// Writes outcomes; only deliveries still holding `leaseToken` are changed. Returns how many were.
    func complete(_ completions: [DeliveryCompletion], leaseToken: UUID) async throws -> Int

    /// Returns unstarted claimed deliveries to pending without counting an attempt, runnable again after
    /// `delay` (zero: at once; a circuit breaker passes the time it stays open). Returns how many.
    func release(_ deliveryIDs: [UUID], leaseToken: UUID, delay: Duration) async throws -> Int

    /// Waits until what a claim just saw is safe from a failover (the synchronous standbys flushed past it),
    /// at most `timeout`; false when it is not by then. Queues without replication answer true at once.
    func awaitReplication(timeout: Duration) async throws -> Bool
    /// Says that dispatcher `worker` is about to wait for a wake-up: producers notify only while some
    /// dispatcher does (a claim that finds work clears it). Queues that always wake do nothing.
    func awaitWakeup(worker: UUID) async throws
}

extension DeliveryQueue {
    /// No replication to wait for.
    public func awaitReplication(timeout: Duration) async throws -> Bool { true }
    /// Every change wakes the dispatchers: nothing to say.
    public func awaitWakeup(worker: UUID) async throws {}

    /// Returns unstarted claimed deliveries to pending at once, without counting an attempt.
    public func release(_ deliveryIDs: [UUID], leaseToken: UUID) async throws -> Int {
        try await release(deliveryIDs, leaseToken: leaseToken, delay: .zero)
    }
}

/// Housekeeping any process may run at any time, concurrently with others.
public protocol QueueMaintenance: Sendable {
    /// Returns deliveries whose lease expired (their dispatcher died) to pending.
    func rescueExpiredLeases() async throws -> Int
    /// Moves pending deliveries of expired notifications to the history as `expired`.
    func expirePending() async throws -> Int
    /// Makes at most `batchSize` scheduled deliveries whose time has come (deliver_at, the end of quiet
    /// hours) pending, waking the dispatchers; returns how many.
    func promoteDueDeliveries(batchSize: Int) async throws -> Int
    /// One bounded round of re-timing after quiet-hours changes: at most `users` users (oldest change first,
    /// users another process is re-timing skipped) and `notifications` of their notifications in all, waking
    /// the dispatchers when some became due; returns the deliveries moved and whether another round may find
    /// work now.
    func rescheduleRound(users: Int, notifications: Int) async throws -> (moved: Int, more: Bool)
    /// Deletes history rows, stopped dispatcher rows and idle throttle rows older than `retention`; returns rows deleted.
    func prune(retention: Duration, batchSize: Int) async throws -> Int
    /// Retires active devices not seen for `staleAfter` (deactivated, pending deliveries cancelled, audited).
    func retireStaleDevices(staleAfter: Duration) async throws -> Int
    /// Deletes devices inactive for longer than `retention`, with their remaining deliveries; returns how many.
    func deleteRetiredDevices(retention: Duration) async throws -> Int
    /// Deletes security audit rows older than `retention`; returns how many.
    func pruneAuditLog(retention: Duration) async throws -> Int
    /// Folds the unread-badge rows of the next `users` users after `after` (in user order; `nil`: from the
    /// first); returns the last user looked at, or `nil` when none was left (the next call starts over).
    func compactBadges(after: String?, users: Int) async throws -> String?
    /// Folds the unread-badge rows of `users` (in user order); returns how many of them had rows to fold.
    func foldBadges(users: [String]) async throws -> Int
}
