import Foundation
import NIOConcurrencyHelpers
import SecurePushCore

/// What a dispatcher remembers per push address (device and token: a device that registers a new address is a
/// new entry), for at most `limit` addresses, the oldest inserted forgotten first. Its memory is bounded also
/// when entries are removed and added again (the order is compacted once it holds twice `limit` stale slots).
final class RecentAddresses<Value: Sendable>: Sendable {
    private struct Key: Hashable {
        var device: UUID
        var token: String

        init(_ target: PushTarget) {
            (device, token) = (target.deviceID, target.token)
        }
    }

    private struct Entry {
        var value: Value
        /// When it was inserted: its slot in `order` (a key removed and added again has a newer one).
        var sequence: Int
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        /// Keys in insertion order, from `start`; a slot whose sequence no longer matches its entry is stale.
        var order: [(key: Key, sequence: Int)] = []
        var start = 0
        var nextSequence = 0
    }

    private let limit: Int
    private let state = NIOLockedValueBox(State())

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// The value remembered for `target`.
    func value(for target: PushTarget) -> Value? {
        let key = Key(target)
        return state.withLockedValue { $0.entries[key]?.value }
    }

    /// The order's slots held now, stale ones included (bounded by three times `limit`).
    var storedSlots: Int { state.withLockedValue { $0.order.count - $0.start } }

    /// Changes what is remembered for `target`: `body` gets the value (`nil`: none) and may set it, or set
    /// `nil` to forget the address.
    func update(_ target: PushTarget, _ body: (inout Value?) -> Void) {
        let key = Key(target)
        state.withLockedValue { state in
            let entry = state.entries[key]
            var value = entry?.value
            body(&value)
            switch (entry, value) {
            case (nil, nil):
                return
            case (let entry?, let value?):
                state.entries[key] = Entry(value: value, sequence: entry.sequence)
            case (_?, nil):
                state.entries[key] = nil
            case (nil, let value?):
                state.entries[key] = Entry(value: value, sequence: state.nextSequence)
                state.order.append((key, state.nextSequence))
                state.nextSequence += 1
                forgetOldest(&state)
            }
        }
    }

    private func forgetOldest(_ state: inout State) {
        while state.entries.count > limit, state.start < state.order.count {
            let (key, sequence) = state.order[state.start]
            if state.entries[key]?.sequence == sequence { state.entries[key] = nil }
            state.start += 1
        }
        if state.order.count - state.start > 2 * limit {
            state.order = state.order[state.start...].filter { state.entries[$0.key]?.sequence == $0.sequence }
            state.start = 0
        } else if state.start > limit {
            state.order.removeFirst(state.start)
            state.start = 0
        }
    }
}
