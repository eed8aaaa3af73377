import Testing

@testable import SecurePushDispatcher

/// The lanes claim at the same time only while claims come back full.
@Suite("ClaimGate")
struct ClaimGateTests {
    @Test("while claims come back short, one runs at a time; once one came back full, the lanes overlap")
    func overlapOnlyAfterFullClaims() {
        let gate = ClaimGate()
        #expect(gate.tryEnter(), "nothing running")
        #expect(!gate.tryEnter(), "no claim ended full yet: the second lane waits")
        gate.leave(full: false)
        #expect(gate.tryEnter())
        gate.leave(full: true)
        #expect(gate.tryEnter(), "the last claim was full: a backlog")
        #expect(gate.tryEnter(), "both lanes claim at once")
        gate.leave(full: false)
        #expect(!gate.tryEnter(), "a short claim ended: the next waits for the one still running")
        gate.leave(full: true)
        #expect(gate.tryEnter())
    }

    @Test("a waiting lane starts its claim when the running one ends")
    func waiterStartsWhenTheClaimEnds() async {
        let gate = ClaimGate()
        #expect(gate.tryEnter())
        let waiter = Task { await gate.enter(while: { true }) }
        gate.leave(full: false)
        #expect(await waiter.value, "entered once the running claim ended")
        #expect(!gate.tryEnter(), "the waiter's claim is running now")
    }

    @Test("a lane that stops does not enter")
    func stoppingLaneDoesNotEnter() async {
        let gate = ClaimGate()
        #expect(gate.tryEnter())
        #expect(await gate.enter(while: { false }) == false)
        gate.leave(full: false)
        #expect(gate.tryEnter(), "the stopped lane took no claim")
    }
}
