import Foundation
import Logging
import Metrics
import NIOConcurrencyHelpers
import SecurePushCore

/// A dispatcher process's circuit breakers, shared by its lanes: one per platform, and one per push service
/// (allowed endpoint host) for Web Push and WNS (`CircuitKey`), so their number and their metric series
/// are bounded by the allowlists. A push service's breaker opens only on failures of several distinct users
/// (`CircuitBreakerPolicy.distinctUsers`): devices choose those endpoints, and one user's must not pause
/// everybody's pushes. Exports `securepush_circuit_open{platform,host}` (1 open,
/// 0.5 half-open, 0 closed; `host` is empty for a whole platform) and `securepush_circuit_opened_total{platform}`,
/// and logs every change of state.
public final class CircuitBreakers: Sendable {
    private struct Entry {
        var breaker: CircuitBreaker
        var phase: CircuitBreaker.Phase = .closed
        let gauge: Gauge
    }

    private enum Event {
        case changed(CircuitKey, CircuitBreaker.Phase, until: ContinuousClock.Instant?, opened: Bool)
    }

    /// The thresholds every breaker uses.
    public let policy: CircuitBreakerPolicy
    /// The allowlists that name the push services of Web Push and WNS endpoints.
    public let endpointPolicies: PushEndpointPolicies
    private let entries = NIOLockedValueBox<[CircuitKey: Entry]>([:])
    private let openedCounters: [Platform: Counter]
    private let logger: Logger

    /// Creates closed breakers (made per key on first use).
    public init(policy: CircuitBreakerPolicy, endpointPolicies: PushEndpointPolicies = PushEndpointPolicies(), logger: Logger) {
        self.policy = policy
        self.endpointPolicies = endpointPolicies
        self.logger = logger
        self.openedCounters = Dictionary(
            uniqueKeysWithValues: Platform.allCases.map {
                ($0, Counter(label: "securepush_circuit_opened_total", dimensions: [("platform", $0.rawValue)]))
            })
    }

    /// Whether one push for `key`, to `user`'s device, may go out now.
    func permit(_ key: CircuitKey, user: String?, at now: ContinuousClock.Instant) -> CircuitBreaker.Permit {
        guard policy.enabled else { return .send }
        return update(key, at: now) { $0.permit(at: now, user: user) }
    }

    /// Records what one send to `user` said about the provider.
    func record(_ key: CircuitKey, _ result: CircuitBreaker.Result, probe: Bool, user: String?, at now: ContinuousClock.Instant) {
        guard policy.enabled else { return }
        update(key, at: now) { $0.record(result, probe: probe, source: user, at: now) }
    }

    /// The policy of `key`'s breaker: a push service whose endpoints devices choose opens only on failures of
    /// `policy.distinctUsers` users; a whole platform (one endpoint, the operator's) on any user's.
    func policy(for key: CircuitKey) -> CircuitBreakerPolicy {
        guard key.host == nil else { return policy }
        var platformPolicy = policy
        platformPolicy.distinctUsers = 1
        return platformPolicy
    }

    /// Platforms whose whole-platform breaker lets nothing through now (open, or half-open with its probes
    /// out): their deliveries are not claimed.
    func blockedPlatforms(at now: ContinuousClock.Instant) -> Set<Platform> {
        entries.withLockedValue { entries in
            Set(entries.compactMap { key, entry in key.host == nil && !entry.breaker.wouldPermit(at: now) ? key.platform : nil })
        }
    }

    /// How long until the first blocked platform's breaker lets a probe through; `nil` when none waits on time.
    func untilNextProbe(at now: ContinuousClock.Instant) -> Duration? {
        entries.withLockedValue { entries in
            // Only times still ahead: an open time already over lets probes through (the platform is claimed again).
            entries.compactMap { key, entry in key.host == nil ? entry.breaker.openUntil.flatMap { $0 > now ? $0 - now : nil } : nil }.min()
        }
    }

    /// How many breakers exist (each with its gauge series).
    public var count: Int { entries.withLockedValue { $0.count } }

    /// The breakers that are not closed, with wall-clock times (for the heartbeat and `/status`). Also
    /// moves breakers whose open time is over to half-open, so the gauges follow time.
    public func snapshots() -> [CircuitSnapshot] {
        let now = ContinuousClock.now
        let wallNow = Date()
        let keys = entries.withLockedValue { Array($0.keys) }
        var result: [CircuitSnapshot] = []
        for key in keys.sorted() {
            let (phase, until) = update(key, at: now) { breaker in
                breaker.advance(to: now)
                return (breaker.phase(at: now), breaker.openUntil)
            }
            guard phase != .closed else { continue }
            result.append(
                CircuitSnapshot(
                    platform: key.platform.rawValue, host: key.host, state: phase,
                    openUntil: until.map { wallNow.addingTimeInterval(($0 - now).secondsDouble) }))
        }
        return result
    }

    /// Runs `body` on the key's breaker (made on first use), then reports a change of state. The gauge and
    /// counter are set under the lock, so concurrent lanes cannot leave a stale value behind.
    private func update<T>(_ key: CircuitKey, at now: ContinuousClock.Instant, _ body: (inout CircuitBreaker) -> T) -> T {
        let (value, event) = entries.withLockedValue { entries -> (T, Event?) in
            var entry: Entry
            if let existing = entries[key] {
                entry = existing
            } else {
                let dimensions = [("platform", key.platform.rawValue), ("host", key.host ?? "")]
                entry = Entry(
                    breaker: CircuitBreaker(policy: policy(for: key)), gauge: Gauge(label: "securepush_circuit_open", dimensions: dimensions))
                entry.gauge.record(0)
            }
            let openings = entry.breaker.openings
            let value = body(&entry.breaker)
            let phase = entry.breaker.phase(at: now)
            let opened = entry.breaker.openings > openings
            var event: Event?
            if phase != entry.phase || opened {
                entry.phase = phase
                entry.gauge.record(Self.gaugeValue(phase))
                if opened { openedCounters[key.platform]?.increment() }
                event = .changed(key, phase, until: entry.breaker.openUntil, opened: opened)
            }
            entries[key] = entry
            return (value, event)
        }
        if case .changed(let key, let phase, let until, let opened) = event {
            log(key, phase, openFor: until.map { max(.zero, $0 - now) }, opened: opened)
        }
        return value
    }

    /// The gauge's value: 1 open, 0.5 half-open, 0 closed.
    static func gaugeValue(_ phase: CircuitBreaker.Phase) -> Double {
        switch phase {
        case .open: 1
        case .halfOpen: 0.5
        case .closed: 0
        }
    }

    private func log(_ key: CircuitKey, _ phase: CircuitBreaker.Phase, openFor: Duration?, opened: Bool) {
        var metadata: Logger.Metadata = ["push.platform": "\(key.platform.rawValue)", "circuit.state": "\(phase.rawValue)"]
        if let host = key.host { metadata["circuit.host"] = "\(host)" }
        if opened {
            if let openFor { metadata["circuit.open_for"] = "\(openFor)" }
            logger.warning("circuit breaker opened: pausing pushes to a failing provider", metadata: metadata)
        } else if phase == .closed {
            logger.notice("circuit breaker closed: the provider answers again", metadata: metadata)
        } else {
            logger.info("circuit breaker half-open: letting a probe through", metadata: metadata)
        }
    }
}
