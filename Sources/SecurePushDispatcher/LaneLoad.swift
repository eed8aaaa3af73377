import NIOConcurrencyHelpers
import SecurePushCore

/// The sends one dispatcher lane has in flight, across its batches, and per user.
///
/// A lane claims its next batch as soon as the current one has started its sends, when it has sends to
/// spare; a batch whose sends are done writes its outcomes on its own. So a slow endpoint holds only its own
/// send and its batch's bookkeeping, never the lane. These bounds keep that honest:
///
/// - the lane never has more than `limit` sends in flight (the `concurrency` setting: what a push service
///   gets from this lane at most, also while it hangs);
/// - one user never has more than `perUserLimit` of them, and starts none while `slowPerUserLimit` of theirs
///   are slow (unanswered after `slowAfter`), so one user's slow endpoints hold little of the lane, and of a
///   push service connection's streams; his further pushes wait in their batch while the lane goes on;
/// - a user with two or more sends in flight does not take the last quarter of the slots (`reserved`):
///   however many accounts have a backlog or endpoints that hang, another user's first push finds a slot.
final class LaneLoad: Sendable {
    /// A send's slot, from `begin(user:at:)` to `end(_:)`.
    struct Ticket: Sendable {
        fileprivate let id: Int
        fileprivate let user: String?
    }

    private struct State {
        var nextID = 0
        var inFlight = 0
        /// The sends not yet slow, in the order they started (ended ones are skipped when met).
        var starts: [(id: Int, user: String?, at: ContinuousClock.Instant)] = []
        var startsHead = 0
        /// Sends in flight that are not slow yet (the others in flight are: unanswered after `slowAfter`).
        var young: Set<Int> = []
        var perUser: [String: Int] = [:]
        var slowPerUser: [String: Int] = [:]

        /// Marks the sends started before `now - slowAfter` slow.
        mutating func age(at now: ContinuousClock.Instant, slowAfter: Duration) {
            while startsHead < starts.count {
                let (id, user, at) = starts[startsHead]
                if young.contains(id) {
                    guard now - at >= slowAfter else { break }
                    young.remove(id)
                    if let user { slowPerUser[user, default: 0] += 1 }
                }
                startsHead += 1
            }
            if startsHead > 1024, startsHead * 2 > starts.count {
                starts.removeFirst(startsHead)
                startsHead = 0
            }
        }
    }

    /// The lane's sends in flight at most.
    let limit: Int
    /// One user's sends in flight at most.
    let perUserLimit: Int
    /// One user's slow sends at most before they start no other.
    let slowPerUserLimit: Int
    /// How long before an unanswered send counts as slow.
    let slowAfter: Duration
    /// The slots only users with fewer than two sends in flight take.
    let reserved: Int
    private let state = NIOLockedValueBox(State())
    /// Signalled whenever a send ends.
    let ended = WakeSignal()

    init(limit: Int, perUserLimit: Int, slowAfter: Duration = .milliseconds(500)) {
        self.limit = max(1, limit)
        self.perUserLimit = max(1, perUserLimit)
        self.slowPerUserLimit = max(1, self.perUserLimit / 4)
        self.slowAfter = slowAfter
        self.reserved = self.limit / 4
    }

    /// The sends in flight now.
    var inFlight: Int { state.withLockedValue { $0.inFlight } }

    /// The sends in flight that are slow.
    var slowInFlight: Int {
        state.withLockedValue { state in
            state.age(at: .now, slowAfter: slowAfter)
            return state.inFlight - state.young.count
        }
    }

    /// Whether the lane has a send to spare.
    var hasRoom: Bool { inFlight < limit }

    /// What `begin(user:)` did.
    enum Begin {
        /// A slot is taken: send, then call `end(_:)` with the ticket.
        case started(Ticket)
        /// The lane has no slot free: wait for one.
        case laneFull
        /// The user has `perUserLimit` sends in flight, `slowPerUserLimit` slow ones, or two or more while only
        /// the reserved slots are left: this one waits for one of them.
        case userFull
    }

    /// Takes a slot for a send to `user` (`nil`, an unknown user, is never held back).
    func begin(user: String?, at now: ContinuousClock.Instant = .now) -> Begin {
        state.withLockedValue { state in
            state.age(at: now, slowAfter: slowAfter)
            guard state.inFlight < limit else { return .laneFull }
            if let user {
                let current = state.perUser[user, default: 0]
                guard current < perUserLimit, state.slowPerUser[user, default: 0] < slowPerUserLimit else { return .userFull }
                // The last quarter of the slots is kept for users with fewer than two sends in flight.
                guard current < 2 || limit - state.inFlight > reserved else { return .userFull }
                state.perUser[user] = current + 1
            }
            let id = state.nextID
            state.nextID += 1
            state.inFlight += 1
            state.young.insert(id)
            state.starts.append((id, user, now))
            return .started(Ticket(id: id, user: user))
        }
    }

    /// Waits until a send of the lane ends, or `timeout`; at once when the lane has room.
    func waitForRoom(timeout: Duration) async {
        let seen = ended.generation
        guard !hasRoom else { return }
        await ended.wait(since: seen, timeout: max(timeout, .milliseconds(1)))
    }

    /// Frees what `begin(user:)` took.
    func end(_ ticket: Ticket) {
        state.withLockedValue { state in
            state.inFlight -= 1
            if state.young.remove(ticket.id) == nil, let user = ticket.user {
                let remaining = state.slowPerUser[user, default: 1] - 1
                state.slowPerUser[user] = remaining > 0 ? remaining : nil
            }
            if let user = ticket.user {
                let remaining = state.perUser[user, default: 1] - 1
                state.perUser[user] = remaining > 0 ? remaining : nil
            }
        }
        ended.signal()
    }
}
