/// When a circuit breaker opens and how long it stays open. The defaults: open after 5 provider failures
/// in a row, or when at least half of at least 20 results in the last 10 s were provider failures; stay
/// open 1 s, doubling after every failed probe up to 60 s; one probe at a time while half-open (another once
/// it is 2 s unanswered); and (for the push services whose endpoints devices choose) only on failures of at
/// least 3 distinct users, more of them than the users served well.
public struct CircuitBreakerPolicy: Sendable, Hashable {
    /// Whether breakers are used at all.
    public var enabled: Bool
    /// Provider failures in a row that open the breaker.
    public var consecutiveFailures: Int
    /// The share of provider failures (0...1) over `window` that opens the breaker ...
    public var failureRatio: Double
    /// ... once the window holds at least this many results.
    public var minimumResults: Int
    /// The sliding window the failure ratio is measured over.
    public var window: Duration
    /// How long the breaker stays open the first time.
    public var openDuration: Duration
    /// The longest it stays open (the duration doubles after each failed probe).
    public var maxOpenDuration: Duration
    /// Pushes let through at once while half-open.
    public var halfOpenProbes: Int
    /// Distinct users whose pushes must have failed before the breaker opens (within `window`) or, half-open,
    /// re-opens (among the failed probes): what one user registered cannot pause everybody's pushes. The
    /// dispatcher applies it to the breakers of push services whose endpoints devices choose (Web Push, WNS);
    /// a whole platform's breaker (APNs, FCM: one endpoint, chosen by the operator) uses 1.
    public var distinctUsers: Int
    /// Half-open: a probe unanswered this long no longer holds its slot (a black-hole endpoint cannot keep the
    /// breaker from probing).
    public var probeTimeout: Duration

    /// Creates a policy; the defaults are documented on the type.
    public init(
        enabled: Bool = true, consecutiveFailures: Int = 5, failureRatio: Double = 0.5, minimumResults: Int = 20,
        window: Duration = .seconds(10), openDuration: Duration = .seconds(1), maxOpenDuration: Duration = .seconds(60),
        halfOpenProbes: Int = 1, distinctUsers: Int = 3, probeTimeout: Duration = .seconds(2)
    ) {
        self.enabled = enabled
        self.consecutiveFailures = consecutiveFailures
        self.failureRatio = failureRatio
        self.minimumResults = minimumResults
        self.window = window
        self.openDuration = openDuration
        self.maxOpenDuration = maxOpenDuration
        self.halfOpenProbes = halfOpenProbes
        self.distinctUsers = distinctUsers
        self.probeTimeout = probeTimeout
    }
}
