import Foundation

/// What one circuit breaker guards: a whole platform, or one host of a platform whose endpoint varies
/// per device (Web Push endpoints, WNS channel URIs).
public struct CircuitKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The platform.
    public var platform: Platform
    /// The push service's host (lowercase) for per-host platforms; `nil` for a whole platform.
    public var host: String?

    /// Creates a key.
    public init(platform: Platform, host: String?) {
        self.platform = platform
        self.host = host
    }

    /// The key of `target`: its endpoint's host for Web Push and WNS ("" when the URL has none), else the platform.
    public init(for target: PushTarget) {
        self.platform = target.platform
        self.host = Self.isPerHost(target.platform) ? (URLComponents(string: target.token)?.host?.lowercased() ?? "") : nil
    }

    /// Whether the platform's breakers are per endpoint host (its endpoints vary per device).
    public static func isPerHost(_ platform: Platform) -> Bool {
        platform == .webpush || platform == .wns
    }

    /// `apns`, or `webpush/<host>` for a per-host key.
    public var description: String {
        host.map { "\(platform.rawValue)/\($0)" } ?? platform.rawValue
    }

    public static func < (lhs: CircuitKey, rhs: CircuitKey) -> Bool {
        (lhs.platform.rawValue, lhs.host ?? "") < (rhs.platform.rawValue, rhs.host ?? "")
    }
}
