import Foundation
import SecurePushCore

/// The WNS envelope of a push (docs/envelopes.md): a raw notification whose body is the id, with
/// `X-WNS-TTL` and `X-WNS-Cache-Policy: cache` (WNS keeps the last raw notification for an offline device
/// only with it).
public struct WNSEnvelope: EnvelopeProfile {
    /// Creates the profile.
    public init() {}

    public func request(for push: Push, now: Date) -> WireRequest {
        switch push.kind {
        case .notify:
            return WireRequest(
                path: push.target.token,
                headers: [
                    WireHeader("x-wns-type", "wns/raw"), WireHeader("content-type", "application/octet-stream"),
                    WireHeader("x-wns-ttl", String(push.secondsToLive(now: now))), WireHeader("x-wns-cache-policy", "cache"),
                ],
                body: Data(push.notificationID.description.utf8)
            )
        }
    }
}
