import SecurePushCore

/// How a dispatcher process claims, sends and retries.
public struct DispatcherConfiguration: Sendable {
    /// Pushes in flight at once per lane (what a push service gets from a lane at most, also while it hangs).
    public var concurrency: Int = 64
    /// How long before an unanswered push counts as slow: a user with a quarter of their share of the lane
    /// slow starts no other push until one ends (`LaneLoad`), so endpoints that hang hold little of a lane.
    public var slowSendAfter: Duration = .milliseconds(500)
    /// Deliveries claimed per statement.
    public var batchSize: Int = 256
    /// Independent claim/send/complete loops in this process (pipelines database and network time).
    public var lanes: Int = 2
    /// Fallback poll when no NOTIFY arrives.
    public var pollInterval: Duration = .seconds(1)
    /// How long a claim is held before any process may rescue it.
    public var leaseDuration: Duration = .seconds(30)
    /// How long in-flight sends may take to finish after SIGTERM.
    public var shutdownGracePeriod: Duration = .seconds(10)
    /// Backoff and attempt limit.
    public var retry = RetryPolicy()
    /// How often leases are rescued and expired deliveries swept.
    public var maintenanceInterval: Duration = .seconds(5)
    /// How often the unread-badge rows are folded (`SECUREPUSH_BADGE_FOLD_INTERVAL`): a claim walks each
    /// recipient's badge rows written since the last fold, so this bounds the walk for a busy user.
    public var badgeFoldInterval: Duration = .seconds(1)
    /// How often scheduled deliveries whose time has come are made claimable: a scheduled push leaves
    /// within about this long after its time.
    public var scheduleInterval: Duration = .seconds(1)
    /// How long finished deliveries, expired notifications and stopped dispatcher rows are kept.
    public var retention: Duration = .seconds(7 * 24 * 3600)
    /// The longest a single database call may take before the dispatcher gives up on it and retries.
    public var databaseTimeout: Duration = .seconds(30)
    /// Devices not seen for this long are retired by maintenance (`SECUREPUSH_DEVICE_STALE_AFTER`).
    public var deviceStaleAfter: Duration = .seconds(270 * 86_400)
    /// Inactive devices (retired, revoked, unregistered) are deleted after this long (`SECUREPUSH_DEVICE_RETENTION`).
    public var deviceRetention: Duration = .seconds(30 * 86_400)
    /// Security audit rows are deleted after this long (`SECUREPUSH_AUDIT_RETENTION`).
    public var auditRetention: Duration = .seconds(90 * 86_400)
    /// How often this process writes its heartbeat row.
    public var heartbeatInterval: Duration = .seconds(5)
    /// Whether each push carries its recipient's unread count as the badge (`SECUREPUSH_BADGE=unread`),
    /// computed by the claim statement.
    public var unreadBadge = true
    /// When a push service's circuit breaker opens and for how long (defaults: 5 provider failures in a
    /// row, or ≥ 50 % of ≥ 20 results in 10 s; open 1 s, doubling after each failed probe up to 60 s).
    public var circuitBreaker = CircuitBreakerPolicy()
    /// Whether a claimed batch is sent only once the synchronous standbys have flushed past the claim
    /// (`SECUREPUSH_REPLICATION_GATE`): no push for a commit a failover could take back.
    public var replicationGate = false
    /// Whether pushes carry the producer's preview sealed to the device (`SECUREPUSH_SEALED_PREVIEWS`, docs/security.md):
    /// off, previews are stored and returned by the read API but never pushed, and pushes are exactly id-only.
    public var sealedPreviews = false
    /// The Web Push and WNS allowlists (`SECUREPUSH_WEBPUSH_ALLOWED_HOSTS`, `SECUREPUSH_WNS_ALLOWED_HOSTS`): their
    /// entries name the push services the circuit breakers are kept per.
    public var endpointPolicies = PushEndpointPolicies()
    /// Pushes per second for the whole fleet (`SECUREPUSH_MAX_PUSH_RATE`), shared among the live dispatchers
    /// through their heartbeats; `nil`: unpaced.
    public var maxPushRate: Double?

    /// The defaults.
    public init() {}

    /// Allowed values of `concurrency` (`SECUREPUSH_CONCURRENCY`, `--concurrency`).
    public static let concurrencyRange = 1...10_000
    /// Allowed values of `batchSize` (`SECUREPUSH_BATCH_SIZE`, `--batch-size`).
    public static let batchSizeRange = 1...10_000
    /// Allowed values of `pollInterval` (`SECUREPUSH_POLL_INTERVAL`, `--poll-interval`).
    public static let pollIntervalRange: ClosedRange<Duration> = .milliseconds(10)...(.seconds(300))
    /// Allowed values of `maxPushRate` (`SECUREPUSH_MAX_PUSH_RATE`; 0 turns pacing off).
    public static let maxPushRateRange = 0...10_000_000
}
