import SecurePushCore
import Synchronization

/// Token buckets per key (a device, a user), in this process. A full bucket is forgotten when the
/// table grows, so memory stays bounded by the keys active within one refill time.
final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    private let limit: RateLimit
    private let buckets = Mutex<[String: Bucket]>([:])
    private let clock = ContinuousClock()
    private static let pruneAbove = 10_000

    init(_ limit: RateLimit) {
        self.limit = limit
    }

    /// Takes one token for `key`: `nil` when allowed, else how long until one is available.
    func take(_ key: String) -> Duration? {
        let now = clock.now
        let (perSecond, burst) = (limit.perSecond, Double(limit.burst))
        return buckets.withLock { buckets in
            if buckets.count > Self.pruneAbove {
                let refill = Duration.seconds(burst / perSecond)
                buckets = buckets.filter { now - $0.value.updated < refill }
            }
            var bucket = buckets[key] ?? Bucket(tokens: burst, updated: now)
            bucket.tokens = min(burst, bucket.tokens + (now - bucket.updated).secondsDouble * perSecond)
            bucket.updated = now
            defer { buckets[key] = bucket }
            guard bucket.tokens >= 1 else {
                return .seconds((1 - bucket.tokens) / perSecond)
            }
            bucket.tokens -= 1
            return nil
        }
    }
}
