import Testing

@testable import SecurePushDispatcher

/// The lane's bounds: slots, a user's share, slow sends of one user, and the slots kept for first pushes.
@Suite("LaneLoad")
struct LaneLoadTests {
    @Test("the lane never has more than its limit in flight, slow or not (a push service that hangs gets no more)")
    func limitHolds() {
        let load = LaneLoad(limit: 2, perUserLimit: 100, slowAfter: .seconds(1))
        let start = ContinuousClock.now
        #expect(load.begin(user: nil, at: start).isStarted)
        #expect(load.begin(user: nil, at: start).isStarted)
        #expect(load.begin(user: nil, at: start + .seconds(5)).isLaneFull, "slow sends keep their slots")
        #expect(load.slowInFlight == 2)
    }

    @Test("a user with a quarter of their share slow starts no other send until one ends; others go on")
    func slowSendsOfOneUser() {
        let load = LaneLoad(limit: 64, perUserLimit: 16, slowAfter: .seconds(1))
        let start = ContinuousClock.now
        var tickets: [LaneLoad.Ticket] = []
        for _ in 0..<4 {
            if case .started(let ticket) = load.begin(user: "mallory", at: start) { tickets.append(ticket) }
        }
        #expect(tickets.count == 4)
        let later = start + .seconds(2)
        #expect(load.begin(user: "mallory", at: start + .milliseconds(500)).isStarted, "none slow yet: within the share")
        #expect(load.begin(user: "mallory", at: later).isUserFull, "5 slow sends: mallory waits")
        #expect(load.begin(user: "alice", at: later).isStarted)
        load.end(tickets[0])
        #expect(load.begin(user: "mallory", at: later).isUserFull, "still 4 slow")
        load.end(tickets[1])
        #expect(load.begin(user: "mallory", at: later).isStarted, "one ended: mallory sends again")
    }

    @Test("the last quarter of the slots is kept for users with fewer than two sends in flight")
    func reserveForFirstPushes() {
        let load = LaneLoad(limit: 8, perUserLimit: 8, slowAfter: .seconds(10))
        var started = 0
        while case .started = load.begin(user: "backlog") { started += 1 }
        #expect(started == 6, "one user with a backlog takes 6 of 8 slots")
        #expect(load.begin(user: "other").isStarted, "another user's first push")
        #expect(load.begin(user: "other").isStarted, "and second")
        #expect(load.begin(user: "third").isLaneFull)
    }

    @Test("a user's share: at most perUserLimit in flight, freed when a send ends")
    func perUserShare() {
        let load = LaneLoad(limit: 64, perUserLimit: 2, slowAfter: .seconds(10))
        guard case .started(let first) = load.begin(user: "u") else {
            Issue.record("a slot was free")
            return
        }
        #expect(load.begin(user: "u").isStarted)
        #expect(load.begin(user: "u").isUserFull)
        load.end(first)
        #expect(load.begin(user: "u").isStarted)
    }
}

extension LaneLoad.Begin {
    fileprivate var isStarted: Bool {
        if case .started = self { return true }
        return false
    }
    fileprivate var isLaneFull: Bool {
        if case .laneFull = self { return true }
        return false
    }
    fileprivate var isUserFull: Bool {
        if case .userFull = self { return true }
        return false
    }
}
