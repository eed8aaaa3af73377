import NIOConcurrencyHelpers

/// Token buckets per key (a device, a user), in this process. O(1) per request at any size: the table is
/// split into shards, each with two generations; when a shard's current generation fills, it becomes the
/// previous one and the one before is dropped whole. A bucket not touched for two generations is
/// forgotten (it comes back full), so memory is bounded by `capacity` buckets whatever the traffic.
///
/// Buckets are kept under the key's 64-bit hash, not the key: about 40 bytes a bucket instead of 200 (a
/// broadcast touches every device and user once). The hash is Swift's SipHash with a per-process random
/// seed, so nobody can make two keys share a bucket on purpose; by chance, among 200,000 keys, about one
/// in 10⁹ runs.
package final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    private struct Shard {
        var current: [Int: Bucket] = [:]
        var previous: [Int: Bucket] = [:]
    }

    private let limit: RateLimit
    private final class ShardBox: Sendable {
        let mutex = NIOLockedValueBox(Shard())
    }

    private let shards: [ShardBox]
    private let perGeneration: Int
    private let clock = ContinuousClock()

    /// `capacity` bounds the buckets kept (about 40 bytes each).
    package init(_ limit: RateLimit, capacity: Int = 200_000) {
        self.limit = limit
        let shardCount = 16
        self.shards = (0..<shardCount).map { _ in ShardBox() }
        self.perGeneration = max(1, capacity / shardCount / 2)
    }

    /// How long until `key` has a token, without taking one (`nil` when it has one now).
    package func wait(_ key: String) -> Duration? {
        let now = clock.now
        let hash = key.hashValue
        return shard(hash).mutex.withLockedValue { shard in
            guard let bucket = shard.current[hash] ?? shard.previous[hash] else { return nil }
            let tokens = refilled(bucket, at: now)
            return tokens >= 1 ? nil : .seconds((1 - tokens) / limit.perSecond)
        }
    }

    /// Takes one token for `key`: `nil` when allowed, else how long until one is available.
    package func take(_ key: String) -> Duration? {
        let now = clock.now
        let perGeneration = self.perGeneration
        let hash = key.hashValue
        return shard(hash).mutex.withLockedValue { shard in
            var bucket = shard.current[hash] ?? shard.previous[hash] ?? Bucket(tokens: Double(limit.burst), updated: now)
            bucket.tokens = refilled(bucket, at: now)
            bucket.updated = now
            let allowed = bucket.tokens >= 1
            if allowed { bucket.tokens -= 1 }
            if shard.current[hash] == nil, shard.current.count >= perGeneration {
                shard.previous = shard.current
                shard.current = [:]
            }
            shard.current[hash] = bucket
            return allowed ? nil : .seconds((1 - bucket.tokens) / limit.perSecond)
        }
    }

    /// Gives back a token taken by `take` for a request that turned out not to count (a refused credential).
    package func refund(_ key: String) {
        let hash = key.hashValue
        shard(hash).mutex.withLockedValue { shard in
            if var bucket = shard.current[hash] {
                bucket.tokens = min(Double(limit.burst), bucket.tokens + 1)
                shard.current[hash] = bucket
            } else if var bucket = shard.previous[hash] {
                bucket.tokens = min(Double(limit.burst), bucket.tokens + 1)
                shard.previous[hash] = bucket
            }
        }
    }

    /// The buckets kept now (for tests of the bound).
    package var count: Int {
        shards.reduce(0) { total, shard in total + shard.mutex.withLockedValue { $0.current.count + $0.previous.count } }
    }

    private func refilled(_ bucket: Bucket, at now: ContinuousClock.Instant) -> Double {
        min(Double(limit.burst), bucket.tokens + (now - bucket.updated).secondsDouble * limit.perSecond)
    }

    private func shard(_ hash: Int) -> ShardBox {
        // The high bits pick the shard; the dictionary inside uses the whole hash.
        shards[Int((UInt64(UInt(bitPattern: hash)) >> 60) % UInt64(shards.count))]
    }
}
