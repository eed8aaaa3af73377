import Testing

@testable import SecurePushDispatcher

/// The lane's bounds: slots, a user's share, and sends that hang giving their slot back.
@Suite("LaneLoad")
struct LaneLoadTests {
    @Test("a send unanswered past slowAfter gives its slot back; slow sends still count against their user")
    func slowSendsGiveSlotsBack() {
        // A share of 8: a user with 2 slow sends (a quarter of it) starts no other.
        let load = LaneLoad(limit: 2, perUserLimit: 8, slowAfter: .seconds(1))
        let start = ContinuousClock.now
        guard case .started(let first) = load.begin(user: "mallory", at: start),
            case .started = load.begin(user: "mallory", at: start)
        else {
            Issue.record("two slots were free")
            return
        }
        #expect(load.begin(user: "alice", at: start + .milliseconds(500)).isLaneFull, "both slots held within slowAfter")
        let later = start + .milliseconds(1_100)
        guard case .started = load.begin(user: "alice", at: later) else {
            Issue.record("mallory's hanging sends still hold the lane")
            return
        }
        #expect(load.slowInFlight == 2)
        #expect(load.begin(user: "mallory", at: later).isUserFull, "2 slow sends: mallory waits")
        load.end(first)
        #expect(load.slowInFlight == 1)
        guard case .started = load.begin(user: "mallory", at: later) else {
            Issue.record("a slot of mallory's was freed")
            return
        }
    }

    @Test("a user with a quarter of their share slow starts no other send until one ends")
    func slowSendsOfOneUser() {
        let load = LaneLoad(limit: 64, perUserLimit: 16, slowAfter: .seconds(1))
        let start = ContinuousClock.now
        var tickets: [LaneLoad.Ticket] = []
        for _ in 0..<4 {
            if case .started(let ticket) = load.begin(user: "mallory", at: start) { tickets.append(ticket) }
        }
        #expect(tickets.count == 4)
        let later = start + .seconds(2)
        #expect(load.begin(user: "mallory", at: later).isUserFull, "4 slow sends: mallory waits")
        #expect(load.begin(user: "alice", at: later).isStarted)
        load.end(tickets[0])
        #expect(load.begin(user: "mallory", at: later).isStarted, "one ended: mallory sends again")
    }

    @Test("slow sends are bounded: past four times the lane's limit a hanging send keeps its slot")
    func slowSendsBounded() {
        let load = LaneLoad(limit: 1, perUserLimit: 100, slowAfter: .seconds(1))
        var at = ContinuousClock.now
        for _ in 0..<5 {
            guard case .started = load.begin(user: "u", at: at) else {
                Issue.record("the previous send turned slow and gave its slot back")
                return
            }
            at += .seconds(2)
        }
        #expect(load.slowInFlight == 4)
        #expect(load.begin(user: "u", at: at).isLaneFull, "the fifth hanging send keeps its slot")
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

    @Test("a lane that is full says how long until a slot is given back")
    func untilSlotFreed() {
        let load = LaneLoad(limit: 1, perUserLimit: 1, slowAfter: .seconds(1))
        _ = load.begin(user: "u")
        let wait = load.untilSlotFreed(atMost: .seconds(5))
        #expect(wait <= .seconds(1) && wait > .milliseconds(500))
        #expect(load.untilSlotFreed(atMost: .milliseconds(100)) == .milliseconds(100))
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
