import NIOConcurrencyHelpers
import SecurePushCore

/// The sends one dispatcher lane has in flight, across its batches, and per user.
///
/// A lane claims its next batch as soon as the current one has started its sends, when it has sends to
/// spare; a batch whose sends are done writes its outcomes on its own. So a slow endpoint holds only its own
/// send and its batch's bookkeeping, never the lane. Two bounds keep that honest: the lane never has more
/// than `limit` sends in flight (the `concurrency` setting), and one user never more than `perUserLimit` of
/// them, so one user's slow endpoints cannot take the lane's capacity (his further pushes wait in their
/// batch, without spending an attempt, while the lane goes on).
final class LaneLoad: Sendable {
    private struct State {
        var inFlight = 0
        var perUser: [String: Int] = [:]
    }

    /// The lane's sends in flight at most.
    let limit: Int
    /// One user's sends in flight at most.
    let perUserLimit: Int
    private let state = NIOLockedValueBox(State())
    /// Signalled whenever a send ends.
    let ended = WakeSignal()

    init(limit: Int, perUserLimit: Int) {
        self.limit = max(1, limit)
        self.perUserLimit = max(1, perUserLimit)
    }

    /// The sends in flight now.
    var inFlight: Int { state.withLockedValue { $0.inFlight } }

    /// Whether the lane has a send to spare.
    var hasRoom: Bool { inFlight < limit }

    /// What `begin(user:)` did.
    enum Begin {
        /// A slot is taken: send, then call `end(user:)`.
        case started
        /// The lane has no slot free: wait for one.
        case laneFull
        /// The user has `perUserLimit` sends in flight: this one waits for one of them.
        case userFull
    }

    /// Takes a slot for a send to `user` (`nil`, an unknown user, is never held back).
    func begin(user: String?) -> Begin {
        state.withLockedValue { state in
            guard state.inFlight < limit else { return .laneFull }
            if let user {
                let current = state.perUser[user, default: 0]
                guard current < perUserLimit else { return .userFull }
                state.perUser[user] = current + 1
            }
            state.inFlight += 1
            return .started
        }
    }

    /// Waits until a send of the lane ends, or `timeout`; at once when the lane has room.
    func waitForRoom(timeout: Duration) async {
        let seen = ended.generation
        guard !hasRoom else { return }
        await ended.wait(since: seen, timeout: max(timeout, .milliseconds(1)))
    }

    /// Frees the slot `begin(user:)` took.
    func end(user: String?) {
        state.withLockedValue { state in
            state.inFlight -= 1
            if let user {
                let remaining = state.perUser[user, default: 1] - 1
                state.perUser[user] = remaining > 0 ? remaining : nil
            }
        }
        ended.signal()
    }
}
