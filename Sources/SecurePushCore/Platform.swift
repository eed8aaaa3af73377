/// A push platform a device can be reached through.
public enum Platform: String, Sendable, Hashable, CaseIterable, Codable {
    /// Apple Push Notification service (HTTP/2 provider API).
    case apns
    /// Firebase Cloud Messaging HTTP v1.
    case fcm
    /// Windows Push Notification Services.
    case wns
    /// Web Push (RFC 8030/8291/8292).
    case webpush
    /// UnifiedPush: Web Push to the endpoint a distributor gave an Android app (phones without Google's services,
    /// often a self-hosted ntfy server), with its own endpoint allowlist (`SECUREPUSH_UNIFIEDPUSH_ALLOWED_HOSTS`).
    case unifiedpush
    /// A stand-in that records what it would send; the default for local runs, tests and benchmarks.
    case simulated

    /// Whether a device's token is a URL the device chose (a Web Push endpoint, a WNS channel URI): never trusted,
    /// checked against an endpoint policy at registration and at every send, and refused unless printable ASCII.
    public var tokenIsURL: Bool {
        switch self {
        case .webpush, .unifiedpush, .wns: true
        case .apns, .fcm, .simulated: false
        }
    }

    /// Whether the platform encrypts each message to the device itself (a Web Push subscription carries its own
    /// keys, RFC 8291): with sealed previews on, such a device needs no sealing key of its own, and whatever
    /// preview it gets is sealed by its subscription.
    public var sealsItsOwnMessage: Bool {
        switch self {
        case .webpush, .unifiedpush: true
        case .apns, .fcm, .wns, .simulated: false
        }
    }
}
