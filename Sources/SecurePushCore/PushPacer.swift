import NIOConcurrencyHelpers

/// Paces this process's pushes to its share of a fleet-wide rate (`SECUREPUSH_MAX_PUSH_RATE`), so that a
/// broadcast's fetch storm (every push makes a phone fetch within seconds) stays within what the read API
/// carries. The share is the fleet rate divided by the live dispatchers, which every process counts from
/// the heartbeat rows; a token bucket holding 50 ms of the share (at least one push) spaces the sends.
///
/// Tokens are reserved, never waited for in a queue: a caller takes the next free slot and sleeps until it,
/// so concurrent lanes share the rate fairly and a cancelled wait gives its slot back.
public final class PushPacer: Sendable {
    /// Pushes per second for the whole fleet.
    public let fleetRate: Double
    private struct Bucket {
        var rate: Double
        var tokens: Double
        var updated: ContinuousClock.Instant
        var processes: Int
    }
    private let bucket: NIOLockedValueBox<Bucket>

    /// A pacer for `fleetRate` pushes per second shared by `processes` live dispatchers.
    public init(fleetRate: Double, processes: Int = 1, now: ContinuousClock.Instant = .now) {
        precondition(fleetRate > 0, "a push rate must be positive")
        self.fleetRate = fleetRate
        let rate = fleetRate / Double(max(processes, 1))
        self.bucket = NIOLockedValueBox(Bucket(rate: rate, tokens: Self.capacity(rate), updated: now, processes: max(processes, 1)))
    }

    /// This process's pushes per second.
    public var rate: Double { bucket.withLockedValue { $0.rate } }

    /// The live dispatchers the rate is shared by.
    public var processes: Int { bucket.withLockedValue { $0.processes } }

    /// Shares the fleet rate among `processes` live dispatchers (this one included, so at least 1); returns
    /// whether the share changed.
    @discardableResult
    public func share(among processes: Int, now: ContinuousClock.Instant = .now) -> Bool {
        let processes = max(processes, 1)
        return bucket.withLockedValue { bucket in
            guard bucket.processes != processes else { return false }
            Self.refill(&bucket, now)
            bucket.processes = processes
            bucket.rate = fleetRate / Double(processes)
            bucket.tokens = min(bucket.tokens, Self.capacity(bucket.rate))
            return true
        }
    }

    /// Reserves one push's slot: how long to wait before sending it (zero when a token is at hand).
    public func reserve(now: ContinuousClock.Instant = .now) -> Duration {
        bucket.withLockedValue { bucket in
            Self.refill(&bucket, now)
            bucket.tokens -= 1
            return bucket.tokens >= 0 ? .zero : .microseconds(Int64((-bucket.tokens / bucket.rate * 1_000_000).rounded(.up)))
        }
    }

    /// Gives back a slot reserved by a caller that will not send.
    public func giveBack() {
        bucket.withLockedValue { $0.tokens = min($0.tokens + 1, Self.capacity($0.rate)) }
    }

    /// Waits for one push's slot; false (slot given back) when the task is cancelled meanwhile.
    public func acquire() async -> Bool {
        let wait = reserve()
        guard wait > .zero else { return true }
        do {
            try await Task.sleep(for: wait)
            return true
        } catch {
            giveBack()
            return false
        }
    }

    /// The most deliveries worth claiming at once: what this share sends in a quarter of `lease`, so a
    /// paced batch is sent well inside its lease (at least 1, at most `limit`).
    public func batchLimit(_ limit: Int, lease: Duration) -> Int {
        min(limit, max(1, Int(rate * lease.secondsDouble / 4)))
    }

    private static func capacity(_ rate: Double) -> Double { max(1, rate * 0.05) }

    private static func refill(_ bucket: inout Bucket, _ now: ContinuousClock.Instant) {
        guard now > bucket.updated else { return }
        bucket.tokens = min(capacity(bucket.rate), bucket.tokens + (now - bucket.updated).secondsDouble * bucket.rate)
        bucket.updated = now
    }
}
