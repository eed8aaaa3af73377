import SecurePushCore

/// Per-device failure isolation, before the shared circuit breakers: a push address (device and token) whose
/// last `threshold` pushes all failed as a push service's failure would (5xx, timeouts, refused connections:
/// `PushResult.retry` with `.provider` scope) is not pushed again for a while (1 s, doubling with each further
/// failure, at most `maxPause`); its deliveries due meanwhile are settled as retries, spending an attempt, so a
/// backlog of deliveries to endpoints that never work runs out instead of cycling, and costs no encryption or
/// connection. A push the service accepts forgets the address. At most `limit` addresses, the oldest
/// forgotten first.
final class FailingDevices: Sendable {
    private struct Entry {
        var failures = 0
        var pausedUntil: ContinuousClock.Instant?
    }

    /// Failures in a row before an address is paused.
    let threshold: Int
    /// The longest pause.
    let maxPause: Duration
    private let addresses: RecentAddresses<Entry>

    init(threshold: Int = 3, maxPause: Duration = .seconds(60), limit: Int = 10_000) {
        self.threshold = max(1, threshold)
        self.maxPause = maxPause
        self.addresses = RecentAddresses(limit: limit)
    }

    /// Records what the platform said about a push to `target`.
    func record(_ target: PushTarget, _ result: PushResult, at now: ContinuousClock.Instant) {
        switch result {
        case .retry(_, _, .provider):
            addresses.update(target) { value in
                var entry = value ?? Entry()
                entry.failures += 1
                if entry.failures >= threshold {
                    let doublings = min(entry.failures - threshold, 6)
                    entry.pausedUntil = now + min(maxPause, .seconds(1 << doublings))
                }
                value = entry
            }
        case .sent:
            addresses.update(target) { $0 = nil }
        default:
            break
        }
    }

    /// What the dispatcher asks before a push, in one lookup: how long `target` stays paused (`nil` when it may be
    /// pushed), and whether its last push failed as a push service's failure would (its next push then goes on a
    /// connection apart, `Push.quarantined`).
    func standing(of target: PushTarget, at now: ContinuousClock.Instant) -> (pause: Duration?, failed: Bool) {
        guard let entry = addresses.value(for: target) else { return (nil, false) }
        let pause = entry.pausedUntil.flatMap { $0 > now ? $0 - now : nil }
        return (pause, entry.failures > 0)
    }

    /// How long `target` stays paused, or `nil` when it may be pushed.
    func pause(of target: PushTarget, at now: ContinuousClock.Instant) -> Duration? { standing(of: target, at: now).pause }
}
