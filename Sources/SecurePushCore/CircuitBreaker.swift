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
///
/// Neither opening (by count, by ratio or by a `Retry-After`) nor re-opening after failed probes happens
/// before the failures come from `policy.distinctUsers` distinct users (the `source` of each result): with
/// endpoints chosen by devices, one user can make every push to his own endpoints fail, and must not pause
/// the service for everybody. With `distinctUsers` above 1 (such a push service), a group of accounts is held
/// to the same rule (issue 47): the breaker opens only while the users whose last push in the window failed
/// outnumber those whose last push succeeded (in a real outage every user's next push fails, so it still
/// opens within a few pushes); half-open, the users who failed (before it opened, or with a probe since) are
/// not probes, so their backlog cannot keep winning the probe; and a probe unanswered after
/// `policy.probeTimeout` no longer holds its slot. Half-open, a failed probe of too few users frees its slot
/// for the next probe, so another user's success closes the breaker.
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
    /// The users whose pushes failed in the window (closed) or whose probes failed (half-open), with the
    /// time of their last failure; at most `sourceLimit`, the oldest dropped first.
    private var failedSources: [Source: ContinuousClock.Instant] = [:]
    /// The users whose last push in the window succeeded (closed), with its time; at most `sourceLimit`, the
    /// oldest dropped first.
    private var succeededSources: [Source: ContinuousClock.Instant] = [:]
    /// Half-open: the users whose failures opened it (they send no probe).
    private var suspects: Set<Source> = []
    /// Half-open: when the last probe went out, and when it turned half-open.
    private var lastProbeAt: ContinuousClock.Instant?
    private var halfOpenSince: ContinuousClock.Instant?
    /// Numbers the failures of unknown users, each a user of its own.
    private var anonymousFailures = 0

    private enum Source: Hashable {
        case user(String)
        case anonymous(Int)
    }

    private var sourceLimit: Int { max(1, policy.distinctUsers) + 16 }

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
        case .halfOpen: probeSlotFree(at: now)
        }
    }

    /// Half-open: a probe may go (fewer in flight than allowed, or the last one unanswered past `probeTimeout`).
    private func probeSlotFree(at now: ContinuousClock.Instant) -> Bool {
        probesInFlight < max(1, policy.halfOpenProbes) || lastProbeAt.map { now - $0 >= policy.probeTimeout } ?? true
    }

    /// Turns an open breaker whose time is up half-open.
    public mutating func advance(to now: ContinuousClock.Instant) {
        if case .open(let until) = state, now >= until {
            state = .halfOpen
            probesInFlight = 0
            halfOpenSince = now
        }
    }

    /// Decides whether one push (to `user`'s device; `nil`: unknown) may go out now; a probe must be followed
    /// by `record(_:probe:at:)` with `probe: true`.
    public mutating func permit(at now: ContinuousClock.Instant, user: String? = nil) -> Permit {
        advance(to: now)
        switch state {
        case .closed:
            return .send
        case .open(let until):
            return .reject(retryAfter: until - now)
        case .halfOpen:
            // A user who failed probes only when nobody else has for `probeTimeout` (a real outage among few
            // users must still be probed).
            if policy.distinctUsers > 1, let user, suspects.contains(.user(user)) || failedSources[.user(user)] != nil,
                now - (lastProbeAt ?? halfOpenSince ?? now) < policy.probeTimeout
            {
                return .reject(retryAfter: policy.openDuration)
            }
            guard probeSlotFree(at: now) else { return .reject(retryAfter: policy.openDuration) }
            probesInFlight += 1
            lastProbeAt = now
            return .probe
        }
    }

    /// Records one send's result. `probe` says whether `permit` let it through as a probe: only probes
    /// decide a half-open breaker (a late result of a send started before the breaker opened does not).
    /// `source` is the push's user (`nil`: unknown, a user of its own).
    public mutating func record(_ result: Result, probe: Bool, source: String? = nil, at now: ContinuousClock.Instant) {
        advance(to: now)
        if case .failure = result {
            switch state {
            case .closed: noteFailure(of: source, at: now)
            case .halfOpen where probe: noteFailure(of: source, at: now)
            case .open, .halfOpen: break
            }
        } else if case .success = result, case .closed = state {
            noteSuccess(of: source, at: now)
        }
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
                guard enoughUsersFailed(at: now) else { return }
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
            guard enoughUsersFailed(at: now) else { return }
            if let retryAfter {
                open(at: now, for: max(openDuration, retryAfter))
            } else if shouldOpen(at: now) {
                open(at: now, for: openDuration)
            }
        }
    }

    /// How many distinct users' pushes failed: in the window while closed, among the failed probes while half-open.
    public func failedUsers(at now: ContinuousClock.Instant) -> Int {
        switch state {
        case .closed: failedSources.values.filter { now - $0 < policy.window }.count
        default: failedSources.count
        }
    }

    private func enoughUsersFailed(at now: ContinuousClock.Instant) -> Bool {
        let failed = failedUsers(at: now)
        guard failed >= max(1, policy.distinctUsers) else { return false }
        // A push service's breaker: the failing users must outnumber the users it serves well.
        guard policy.distinctUsers > 1, case .closed = state else { return true }
        return failed > succeededSources.values.filter { now - $0 < policy.window }.count
    }

    private mutating func noteSuccess(of source: String?, at now: ContinuousClock.Instant) {
        guard policy.distinctUsers > 1, let source else { return }
        failedSources[.user(source)] = nil
        succeededSources = succeededSources.filter { now - $0.value < policy.window }
        succeededSources[.user(source)] = now
        if succeededSources.count > sourceLimit, let oldest = succeededSources.min(by: { $0.value < $1.value })?.key {
            succeededSources[oldest] = nil
        }
    }

    private mutating func noteFailure(of source: String?, at now: ContinuousClock.Instant) {
        let key: Source
        if let source {
            key = .user(source)
        } else {
            anonymousFailures += 1
            key = .anonymous(anonymousFailures)
        }
        if case .closed = state {
            failedSources = failedSources.filter { now - $0.value < policy.window }
            succeededSources[key] = nil
        }
        failedSources[key] = now
        if failedSources.count > sourceLimit, let oldest = failedSources.min(by: { $0.value < $1.value })?.key {
            failedSources[oldest] = nil
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
        lastProbeAt = nil
        // Those whose failures opened it send no probe while it is half-open.
        suspects.formUnion(failedSources.keys)
        if suspects.count > 4 * sourceLimit { suspects = Set(failedSources.keys) }
        failedSources.removeAll()
        succeededSources.removeAll()
    }

    private mutating func close() {
        state = .closed
        openDuration = policy.openDuration
        consecutiveFailures = 0
        buckets.removeAll()
        probesInFlight = 0
        lastProbeAt = nil
        failedSources.removeAll()
        succeededSources.removeAll()
        suspects.removeAll()
    }
}
