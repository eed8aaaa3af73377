/// Exponential backoff with jitter and a cap, and the attempt limit after which a delivery fails.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts (including the first) before a delivery is marked failed.
    public var maxAttempts: Int
    /// Delay after the first failure.
    public var baseDelay: Duration
    /// Longest delay between attempts (a provider's Retry-After may exceed it).
    public var maxDelay: Duration
    /// Relative jitter, 0...1 (0.1 = ±10 %).
    public var jitter: Double

    /// Creates a policy. The defaults make 8 attempts, waiting 1, 2, 4 … 64 s (±20 %) after each failure: about
    /// 127 s from the first failure to the last attempt (a provider's `Retry-After` can make it longer).
    public init(maxAttempts: Int = 8, baseDelay: Duration = .seconds(1), maxDelay: Duration = .seconds(300), jitter: Double = 0.2) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.jitter = jitter
    }

    /// Whether another attempt is allowed after `attempt` (1-based) failed.
    public func allowsRetry(after attempt: Int) -> Bool {
        attempt < maxAttempts
    }

    /// The delay before the next attempt after `attempt` failed. A provider's `retryAfter` is honoured as a floor.
    public func delay(afterAttempt attempt: Int, retryAfter: Duration?, random: Double = Double.random(in: 0...1)) -> Duration {
        let exponent = max(0, min(attempt - 1, 30))
        let base = baseDelay * Double(1 << exponent)
        let capped = min(base, maxDelay)
        let factor = 1 + jitter * (2 * random - 1)
        let jittered = capped * factor
        if let retryAfter, retryAfter > jittered {
            return retryAfter
        }
        return jittered
    }
}
