/// A circuit breaker for one push service: a platform, or one host of a platform whose endpoints vary
/// (`CircuitKey`). A pure state machine: every call is given the current instant; no clock, no I/O.
///
/// - closed: pushes go out; provider failures are counted. `policy.consecutiveFailures` in a row, or a
///   failure share of at least `policy.failureRatio` over at least `policy.minimumResults` results in
///   `policy.window`, open it. A provider failure with a `Retry-After` opens it at once, until then at least.
/// - open: nothing goes out until the open time is over (`policy.openDuration` at first, doubled after each
///   failed probe up to `policy.maxOpenDuration`; never shorter than a provider's `Retry-After`).
/// - half-open: `policy.halfOpenProbes` pushes at a time go out as probes; a probe's success closes the
///   breaker, its failure opens it again for twice as long.
///
/// Only provider-side transient failures count (`FailureScope.provider`); every other answer shows the
/// provider is up and counts as a success.
public struct CircuitBreaker: Sendable {
    /// The breaker's state.
    public enum State: Sendable, Hashable {
        /// Pushes go out.
        case closed
        /// Nothing goes out before `until`.
        case open(until: ContinuousClock.Instant)
        /// Probes go out, one result decides.
        case halfOpen
    }

    /// The state without its time, as shown in `/status` and logs.
    public enum Phase: String, Sendable, Hashable, Codable {
        case closed
        case open
        case halfOpen = "half_open"
    }

    /// What one push may do now.
    public enum Permit: Sendable, Hashable {
        /// Send it.
        case send
        /// Send it as a probe: its result decides whether the breaker closes.
        case probe
        /// Do not send it; it may go again after `retryAfter`.
        case reject(retryAfter: Duration)
    }

    /// What one send said about the provider.
    public enum Result: Sendable, Hashable {
        /// The provider answered (accepted, or an answer about this push or device alone).
        case success
        /// A provider-side transient failure; `retryAfter` when the provider asked for a pause.
        case failure(retryAfter: Duration?)
        /// Nothing (the send was cancelled by us); a probe's slot is freed.
        case inconclusive
    }

    private struct Bucket {
        var start: ContinuousClock.Instant
        var successes = 0
        var failures = 0
    }

    /// The thresholds and durations.
    public let policy: CircuitBreakerPolicy
    /// The current state (an open breaker whose time is up turns half-open on the next call).
    public private(set) var state: State = .closed
    /// How many times the breaker has opened (re-opening after a failed probe included).
    public private(set) var openings = 0
    private var consecutiveFailures = 0
    private var buckets: [Bucket] = []
    private var openDuration: Duration
    private var probesInFlight = 0

    /// A closed breaker.
    public init(policy: CircuitBreakerPolicy) {
        self.policy = policy
        self.openDuration = policy.openDuration
    }

    /// The phase at `now` (without changing the state).
    public func phase(at now: ContinuousClock.Instant) -> Phase {
        switch state {
        case .closed: .closed
        case .open(let until): now >= until ? .halfOpen : .open
        case .halfOpen: .halfOpen
        }
    }

    /// When an open breaker turns half-open; `nil` unless open.
    public var openUntil: ContinuousClock.Instant? {
        if case .open(let until) = state { return until }
        return nil
    }

    /// Whether `permit(at:)` would let a push through at `now`.
    public func wouldPermit(at now: ContinuousClock.Instant) -> Bool {
        switch state {
        case .closed: true
        case .open(let until): now >= until
        case .halfOpen: probesInFlight < max(1, policy.halfOpenProbes)
        }
    }

    /// Turns an open breaker whose time is up half-open.
    public mutating func advance(to now: ContinuousClock.Instant) {
        if case .open(let until) = state, now >= until {
            state = .halfOpen
            probesInFlight = 0
        }
    }

    /// Decides whether one push may go out now; a probe must be followed by `record(_:probe:at:)` with `probe: true`.
    public mutating func permit(at now: ContinuousClock.Instant) -> Permit {
        advance(to: now)
        switch state {
        case .closed:
            return .send
        case .open(let until):
            return .reject(retryAfter: until - now)
        case .halfOpen:
            guard probesInFlight < max(1, policy.halfOpenProbes) else { return .reject(retryAfter: policy.openDuration) }
            probesInFlight += 1
            return .probe
        }
    }

    /// Records one send's result. `probe` says whether `permit` let it through as a probe: only probes
    /// decide a half-open breaker (a late result of a send started before the breaker opened does not).
    public mutating func record(_ result: Result, probe: Bool, at now: ContinuousClock.Instant) {
        advance(to: now)
        switch state {
        case .closed:
            record(closed: result, at: now)
        case .open(let until):
            // Late results of sends started before it opened: only a longer Retry-After changes anything.
            if case .failure(let retryAfter?) = result, now + retryAfter > until {
                state = .open(until: now + retryAfter)
            }
        case .halfOpen:
            guard probe else { return }
            probesInFlight = max(0, probesInFlight - 1)
            switch result {
            case .success:
                close()
            case .failure(let retryAfter):
                openDuration = min(openDuration * 2, policy.maxOpenDuration)
                open(at: now, for: max(openDuration, retryAfter ?? .zero))
            case .inconclusive:
                break
            }
        }
    }

    private mutating func record(closed result: Result, at now: ContinuousClock.Instant) {
        switch result {
        case .inconclusive:
            return
        case .success:
            consecutiveFailures = 0
            count(failed: false, at: now)
        case .failure(let retryAfter):
            consecutiveFailures += 1
            count(failed: true, at: now)
            if let retryAfter {
                open(at: now, for: max(openDuration, retryAfter))
            } else if shouldOpen(at: now) {
                open(at: now, for: openDuration)
            }
        }
    }

    /// Results counted in the window ending at `now`: all of them, and the provider failures.
    public func windowCounts(at now: ContinuousClock.Instant) -> (results: Int, failures: Int) {
        buckets.filter { now - $0.start < policy.window }.reduce((0, 0)) { ($0.0 + $1.successes + $1.failures, $0.1 + $1.failures) }
    }

    private func shouldOpen(at now: ContinuousClock.Instant) -> Bool {
        if consecutiveFailures >= max(1, policy.consecutiveFailures) { return true }
        let (results, failures) = windowCounts(at: now)
        return results >= max(1, policy.minimumResults) && Double(failures) >= policy.failureRatio * Double(results)
    }

    private mutating func count(failed: Bool, at now: ContinuousClock.Instant) {
        let window = policy.window
        let width = window / 10
        buckets.removeAll { now - $0.start >= window }
        if buckets.last.map({ now - $0.start >= width }) ?? true {
            buckets.append(Bucket(start: now))
        }
        let index = buckets.count - 1
        if failed {
            buckets[index].failures += 1
        } else {
            buckets[index].successes += 1
        }
    }

    private mutating func open(at now: ContinuousClock.Instant, for duration: Duration) {
        state = .open(until: now + duration)
        openings += 1
        consecutiveFailures = 0
        buckets.removeAll()
        probesInFlight = 0
    }

    private mutating func close() {
        state = .closed
        openDuration = policy.openDuration
        consecutiveFailures = 0
        buckets.removeAll()
        probesInFlight = 0
    }
}
