/// The local end of a claimed batch's lease, on the monotonic clock.
///
/// The database fences completions by lease token, but only the dispatcher can stop itself from
/// *sending* from a lease it has lost: a process paused (SIGSTOP, a long GC-like stall, a VM freeze)
/// after claiming may resume after maintenance rescued its deliveries and another process sent them.
/// The deadline counts from before the claim statement was sent, so it ends no later than the
/// database's `lease_expires_at`, minus a safety margin for clock rate and scheduling.
public struct LeaseDeadline: Sendable, Hashable {
    /// When no send may start any more.
    public let instant: ContinuousClock.Instant

    /// A deadline `lease` after `claimStart`, less `safetyMargin(for: lease)`.
    public init(claimStart: ContinuousClock.Instant, lease: Duration) {
        self.instant = claimStart + lease - Self.safetyMargin(for: lease)
    }

    /// A deadline at `instant`.
    public init(instant: ContinuousClock.Instant) {
        self.instant = instant
    }

    /// The margin kept before the lease's end: 10 % of the lease, at most 2 seconds.
    public static func safetyMargin(for lease: Duration) -> Duration {
        min(.seconds(2), max(.zero, lease / 10))
    }

    /// Whether the deadline has passed at `now`.
    public func hasPassed(at now: ContinuousClock.Instant) -> Bool {
        now >= instant
    }

    /// The time left at `now` (zero once passed).
    public func remaining(at now: ContinuousClock.Instant) -> Duration {
        max(.zero, instant - now)
    }
}
