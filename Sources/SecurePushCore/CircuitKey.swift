import Foundation

/// What one circuit breaker guards: a whole platform, or one push service of a platform whose endpoint
/// varies per device (Web Push endpoints, WNS channel URIs). A push service is the allowed host an
/// endpoint's host falls under, so the number of keys is bounded by the allowlists, whatever hosts
/// devices register.
public struct CircuitKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The platform.
    public var platform: Platform
    /// The push service (an allowed host, lowercase; `other` for a host under none) for per-host platforms;
    /// `nil` for a whole platform.
    public var host: String?

    /// Creates a key.
    public init(platform: Platform, host: String?) {
        self.platform = platform
        self.host = host
    }

    /// The key of `target`: for Web Push and WNS, the allowed host its endpoint's host falls under
    /// (`other` when none, or when the URL has no host), else the platform.
    public init(for target: PushTarget, policies: PushEndpointPolicies) {
        self.platform = target.platform
        guard let policy = policies.policy(for: target.platform) else {
            self.host = nil
            return
        }
        let host = URLComponents(string: target.token)?.host
        self.host = host.flatMap { policy.service(ofHost: $0) } ?? "other"
    }

    /// `apns`, or `webpush/<service>` for a per-service key.
    public var description: String {
        host.map { "\(platform.rawValue)/\($0)" } ?? platform.rawValue
    }

    public static func < (lhs: CircuitKey, rhs: CircuitKey) -> Bool {
        (lhs.platform.rawValue, lhs.host ?? "") < (rhs.platform.rawValue, rhs.host ?? "")
    }
}
