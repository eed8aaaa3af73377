import Foundation
import SecurePushCore

/// Turns a push into what one platform puts on the wire: the path (or URL), the headers and the body,
/// minus authorization and the headers the HTTP client adds (and, for Web Push, before encryption).
///
/// Profiles read only what `Push` carries (the id, the device, the expiry, the priority, the badge count)
/// and their configuration (generic text, style, URLs), so no payload byte can reach the wire. Each one
/// switches over `Push.kind`: a new kind (read sync's `clear`) is added profile by profile. The envelopes
/// are documented in docs/envelopes.md and pinned by golden files in docs/envelopes/.
public protocol EnvelopeProfile: Sendable {
    /// The request for `push`, with TTLs computed from `now`.
    func request(for push: Push, now: Date) -> WireRequest
}

extension EnvelopeProfile {
    /// The request for `push`, now.
    public func request(for push: Push) -> WireRequest { request(for: push, now: Date()) }
}

extension Push {
    /// Seconds until the notification expires (never negative), for TTL headers. Saturating: an expiry from a
    /// relay request or a database (`Int64.max` seconds, `infinity`) never traps.
    func secondsToLive(now: Date) -> Int {
        max(0, Int(saturating: expiresAt.timeIntervalSince(now)))
    }

    /// The expiry as epoch seconds (`apns-expiration`), never negative, saturating like `secondsToLive`.
    var expirationEpochSeconds: Int {
        max(0, Int(saturating: expiresAt.timeIntervalSince1970))
    }
}
