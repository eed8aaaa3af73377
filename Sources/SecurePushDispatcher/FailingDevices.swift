import Foundation
import NIOConcurrencyHelpers
import SecurePushCore

/// Per-device failure isolation, before the shared circuit breakers: a push address (device and token) whose
/// last `threshold` pushes all failed as a push service's failure would (5xx, timeouts, refused connections:
/// `PushResult.retry` with `.provider` scope) is not pushed again for a while (1 s, doubling with each further
/// failure, at most `maxPause`); its deliveries due meanwhile are settled as retries, spending an attempt, so a
/// backlog of deliveries to endpoints that never work runs out instead of cycling, and costs no encryption or
/// connection. A push the service accepts forgets the address. At most `limit` addresses, the oldest
/// forgotten first.
final class FailingDevices: Sendable {
    private struct Key: Hashable {
        var device: UUID
        var token: String
    }

    private struct Entry {
        var failures: Int
        var pausedUntil: ContinuousClock.Instant?
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var order: [Key] = []
        var start = 0
    }

    /// Failures in a row before an address is paused.
    let threshold: Int
    /// The longest pause.
    let maxPause: Duration
    private let limit: Int
    private let state = NIOLockedValueBox(State())

    init(threshold: Int = 3, maxPause: Duration = .seconds(60), limit: Int = 10_000) {
        self.threshold = max(1, threshold)
        self.maxPause = maxPause
        self.limit = max(1, limit)
    }

    /// Records what the platform said about a push to `target`.
    func record(_ target: PushTarget, _ result: PushResult, at now: ContinuousClock.Instant) {
        let key = Key(device: target.deviceID, token: target.token)
        switch result {
        case .retry(_, _, .provider):
            state.withLockedValue { state in
                if state.entries[key] == nil { state.order.append(key) }
                var entry = state.entries[key] ?? Entry(failures: 0, pausedUntil: nil)
                entry.failures += 1
                if entry.failures >= threshold {
                    let doublings = min(entry.failures - threshold, 6)
                    entry.pausedUntil = now + min(maxPause, .seconds(1 << doublings))
                }
                state.entries[key] = entry
                forgetOldest(&state)
            }
        case .sent:
            state.withLockedValue { state in _ = state.entries.removeValue(forKey: key) }
        default:
            break
        }
    }

    /// How long `target` stays paused, or `nil` when it may be pushed.
    func pause(of target: PushTarget, at now: ContinuousClock.Instant) -> Duration? {
        let key = Key(device: target.deviceID, token: target.token)
        return state.withLockedValue { state in
            guard let until = state.entries[key]?.pausedUntil, until > now else { return nil }
            return until - now
        }
    }

    private func forgetOldest(_ state: inout State) {
        while state.entries.count > limit, state.start < state.order.count {
            state.entries.removeValue(forKey: state.order[state.start])
            state.start += 1
        }
        if state.start > limit {
            // Keys forgotten by a success are still in `order`: compact it with the entries that are left.
            state.order = state.order[state.start...].filter { state.entries[$0] != nil }
            state.start = 0
        }
    }
}
