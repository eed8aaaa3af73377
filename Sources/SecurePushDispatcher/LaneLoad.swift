import NIOConcurrencyHelpers
import SecurePushCore

/// The sends one dispatcher lane has in flight, across its batches, and per user.
///
/// A lane claims its next batch as soon as the current one has started its sends, when it has sends to
/// spare; a batch whose sends are done writes its outcomes on its own. So a slow endpoint holds only its own
/// send and its batch's bookkeeping, never the lane. Three bounds keep that honest:
///
/// - the lane never has more than `limit` sends in flight that started less than `slowAfter` ago (the
///   `concurrency` setting): a send still unanswered after `slowAfter` (an endpoint that never answers waits
///   for the request timeout, 10 s) gives its slot back and counts as slow, so hanging sends, whoever
///   registered them, cannot fill the lane;
/// - slow sends are bounded too (`slowLimit`, four times `limit`); past it, a send stays in its slot;
/// - one user never has more than `perUserLimit` sends in flight, slow ones included, and starts none while
///   `slowPerUserLimit` of them are slow, so one user's slow endpoints cannot take the lane's capacity, nor a
///   push service connection's streams (his further pushes wait in their batch while the lane goes on);
///   and a user with two or more sends in flight does not take the last quarter of the slots (`reserved`):
///   however many accounts have a backlog, another user's first push finds a slot.
final class LaneLoad: Sendable {
    /// A send's slot, from `begin(user:at:)` to `end(_:)`.
    struct Ticket: Sendable {
        fileprivate let id: Int
        fileprivate let user: String?
    }

    private struct State {
        var nextID = 0
        /// Sends holding a slot (started less than `slowAfter` ago, or kept past it at `slowLimit`).
        var fast: Set<Int> = []
        /// The fast sends in the order they started (ids of ended ones are skipped when met).
        var starts: [(id: Int, user: String?, at: ContinuousClock.Instant)] = []
        var startsHead = 0
        /// Sends past `slowAfter` that gave their slot back.
        var slow: Set<Int> = []
        var perUser: [String: Int] = [:]
        var slowPerUser: [String: Int] = [:]

        /// Moves the sends started before `now - slowAfter` from the slots to the slow ones.
        mutating func demote(at now: ContinuousClock.Instant, slowAfter: Duration, slowLimit: Int) {
            while startsHead < starts.count {
                let (id, user, at) = starts[startsHead]
                if fast.contains(id) {
                    guard now - at >= slowAfter, slow.count < slowLimit else { break }
                    fast.remove(id)
                    slow.insert(id)
                    if let user { slowPerUser[user, default: 0] += 1 }
                }
                startsHead += 1
            }
            if startsHead > 1024, startsHead * 2 > starts.count {
                starts.removeFirst(startsHead)
                startsHead = 0
            }
        }

        /// How long until the oldest send holding a slot turns slow (`nil`: none will).
        func untilDemotion(at now: ContinuousClock.Instant, slowAfter: Duration, slowLimit: Int) -> Duration? {
            guard startsHead < starts.count, slow.count < slowLimit else { return nil }
            return max(.zero, slowAfter - (now - starts[startsHead].at))
        }
    }

    /// The lane's sends in flight at most, slow ones apart.
    let limit: Int
    /// One user's sends in flight at most.
    let perUserLimit: Int
    /// One user's slow sends at most: a user with this many does not start another before one ends, so a few
    /// accounts' endpoints that never answer hold a bounded number of a push service's connections' streams.
    let slowPerUserLimit: Int
    /// How long a send keeps its slot.
    let slowAfter: Duration
    /// Slow sends at most.
    let slowLimit: Int
    /// The slots only users with fewer than two sends in flight take.
    let reserved: Int
    private let state = NIOLockedValueBox(State())
    /// Signalled whenever a send ends.
    let ended = WakeSignal()

    init(limit: Int, perUserLimit: Int, slowAfter: Duration = .milliseconds(500)) {
        self.limit = max(1, limit)
        self.perUserLimit = max(1, perUserLimit)
        self.slowAfter = slowAfter
        self.slowPerUserLimit = max(1, self.perUserLimit / 4)
        self.slowLimit = 4 * max(1, limit)
        self.reserved = max(1, limit) / 4
    }

    /// The sends holding a slot now.
    var inFlight: Int {
        state.withLockedValue { state in
            state.demote(at: .now, slowAfter: slowAfter, slowLimit: slowLimit)
            return state.fast.count
        }
    }

    /// The sends past `slowAfter` that gave their slot back.
    var slowInFlight: Int { state.withLockedValue { $0.slow.count } }

    /// Whether the lane has a send to spare.
    var hasRoom: Bool { inFlight < limit }

    /// What `begin(user:)` did.
    enum Begin {
        /// A slot is taken: send, then call `end(_:)` with the ticket.
        case started(Ticket)
        /// The lane has no slot free: wait for one.
        case laneFull
        /// The user has `perUserLimit` sends in flight: this one waits for one of them.
        case userFull
    }

    /// Takes a slot for a send to `user` (`nil`, an unknown user, is never held back).
    func begin(user: String?, at now: ContinuousClock.Instant = .now) -> Begin {
        state.withLockedValue { state in
            state.demote(at: now, slowAfter: slowAfter, slowLimit: slowLimit)
            guard state.fast.count < limit else { return .laneFull }
            if let user {
                let current = state.perUser[user, default: 0]
                guard current < perUserLimit, state.slowPerUser[user, default: 0] < slowPerUserLimit else { return .userFull }
                // The last quarter of the slots is kept for users with fewer than two sends in flight: a few
                // users' backlogs never delay another user's first push.
                guard current < 2 || limit - state.fast.count > reserved else { return .userFull }
                state.perUser[user] = current + 1
            }
            let id = state.nextID
            state.nextID += 1
            state.fast.insert(id)
            state.starts.append((id, user, now))
            return .started(Ticket(id: id, user: user))
        }
    }

    /// Waits until a send of the lane ends or gives its slot back, or `timeout`; at once when the lane has room.
    func waitForRoom(timeout: Duration) async {
        let seen = ended.generation
        guard !hasRoom else { return }
        await ended.wait(since: seen, timeout: max(untilSlotFreed(atMost: timeout), .milliseconds(1)))
    }

    /// How long until a send holding a slot gives it back (turns slow), at most `limit`.
    func untilSlotFreed(atMost limit: Duration) -> Duration {
        state.withLockedValue { state in
            let now = ContinuousClock.now
            state.demote(at: now, slowAfter: slowAfter, slowLimit: slowLimit)
            return min(limit, state.untilDemotion(at: now, slowAfter: slowAfter, slowLimit: slowLimit) ?? limit)
        }
    }

    /// Frees what `begin(user:)` took.
    func end(_ ticket: Ticket) {
        state.withLockedValue { state in
            if state.fast.remove(ticket.id) == nil, state.slow.remove(ticket.id) != nil, let user = ticket.user {
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
