/// A token bucket's size: `burst` requests at once, refilled at `perSecond`.
public struct RateLimit: Sendable, Hashable {
    /// Sustained requests per second.
    public var perSecond: Double
    /// Requests allowed at once.
    public var burst: Int

    /// Creates a limit.
    public init(perSecond: Double, burst: Int) {
        self.perSecond = perSecond
        self.burst = burst
    }
}
