import SecurePushCore
import Testing

@Suite("LeaseDeadline")
struct LeaseDeadlineTests {
    @Test(
        "the safety margin is 10 % of the lease, at most 2 s",
        arguments: [
            (Duration.milliseconds(300), Duration.milliseconds(30)),
            (.seconds(5), .milliseconds(500)),
            (.seconds(20), .seconds(2)),
            (.seconds(30), .seconds(2)),
            (.seconds(3600), .seconds(2)),
        ])
    func margin(lease: Duration, margin: Duration) {
        #expect(LeaseDeadline.safetyMargin(for: lease) == margin)
    }

    @Test("the deadline is the claim start plus the lease minus the margin")
    func deadline() {
        let start = ContinuousClock.now
        let deadline = LeaseDeadline(claimStart: start, lease: .seconds(30))
        #expect(deadline.instant == start + .seconds(28))
        #expect(!deadline.hasPassed(at: start + .seconds(27)))
        #expect(deadline.hasPassed(at: start + .seconds(28)))
        #expect(deadline.remaining(at: start + .seconds(27)) == .seconds(1))
        #expect(deadline.remaining(at: start + .seconds(29)) == .zero)
    }
}
