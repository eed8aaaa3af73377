import SecurePushCore
import Testing

@Suite("PushPacer")
struct PushPacerTests {
    @Test("a share is the fleet rate divided by the live dispatchers")
    func share() {
        let pacer = PushPacer(fleetRate: 1000)
        #expect(pacer.rate == 1000)
        #expect(pacer.share(among: 4))
        #expect(pacer.rate == 250)
        #expect(!pacer.share(among: 4))
        // No live row yet (the first heartbeat not yet counted) is this process alone.
        #expect(pacer.share(among: 0))
        #expect(pacer.rate == 1000)
    }

    @Test("after a burst of 50 ms of the share, pushes are spaced at the rate")
    func spacing() {
        let start = ContinuousClock.now
        let pacer = PushPacer(fleetRate: 200, now: start)
        // 200/s holds 10 tokens (50 ms); the 11th push waits 5 ms, the 12th 10 ms.
        for _ in 0..<10 { #expect(pacer.reserve(now: start) == .zero) }
        #expect(pacer.reserve(now: start) == .milliseconds(5))
        #expect(pacer.reserve(now: start) == .milliseconds(10))
        // A second later the bucket is full again, never fuller.
        let later = start + .seconds(1)
        for _ in 0..<10 { #expect(pacer.reserve(now: later) == .zero) }
        #expect(pacer.reserve(now: later) > .zero)
    }

    @Test("N pushes reserved at once span N / rate seconds, whatever the number of callers")
    func fleetBound() {
        let start = ContinuousClock.now
        let pacer = PushPacer(fleetRate: 10_000, processes: 2, now: start)
        var last = Duration.zero
        for _ in 0..<5_000 { last = pacer.reserve(now: start) }
        // 5,000 at 5,000/s: the last one waits one second less the 250-token burst.
        #expect(abs((last - .milliseconds(950)).secondsDouble) < 0.001)
    }

    @Test("a slot given back is free for the next push")
    func giveBack() {
        let start = ContinuousClock.now
        let pacer = PushPacer(fleetRate: 10, now: start)
        #expect(pacer.reserve(now: start) == .zero)
        #expect(pacer.reserve(now: start) == .milliseconds(100))
        pacer.giveBack()
        #expect(pacer.reserve(now: start) == .milliseconds(100))
    }

    @Test("a paced batch fits in a quarter of the lease", arguments: [(50.0, 500, 375), (1.0, 500, 7), (0.01, 500, 1), (100_000.0, 500, 500)])
    func batchLimit(rate: Double, limit: Int, expected: Int) {
        #expect(PushPacer(fleetRate: rate).batchLimit(limit, lease: .seconds(30)) == expected)
    }
}
