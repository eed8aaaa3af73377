import Foundation
import NIOConcurrencyHelpers
import SecurePushCore

/// The push addresses this process has just been told are dead (`tokenInvalid`), so that its lanes send no
/// more to them before the outcome that retires the device is written (outcomes are written after the lane
/// has claimed on; a device's later deliveries in batches already claimed were pushed to the dead address).
/// A delivery to a remembered (device, token) is settled as cancelled, as one to a retired device is. Keyed by
/// the token too: a device that registers a new address is pushed again. At most `limit` entries, the oldest
/// forgotten first (the database's retirement is what lasts).
final class DeadTokens: Sendable {
    private struct Key: Hashable {
        var device: UUID
        var token: String
    }

    private struct State {
        var keys: Set<Key> = []
        var order: [Key] = []
        var start = 0
    }

    private let limit: Int
    private let state = NIOLockedValueBox(State())

    init(limit: Int = 10_000) {
        self.limit = max(1, limit)
    }

    /// Remembers the target of a push the platform called dead.
    func insert(_ target: PushTarget) {
        let key = Key(device: target.deviceID, token: target.token)
        state.withLockedValue { state in
            guard state.keys.insert(key).inserted else { return }
            state.order.append(key)
            if state.keys.count > limit {
                state.keys.remove(state.order[state.start])
                state.start += 1
            }
            if state.start > limit {
                state.order.removeFirst(state.start)
                state.start = 0
            }
        }
    }

    /// Whether the platform called this target dead.
    func contains(_ target: PushTarget) -> Bool {
        let key = Key(device: target.deviceID, token: target.token)
        return state.withLockedValue { $0.keys.contains(key) }
    }
}
