import Foundation
import SecurePushCore

/// The WNS envelope of a push (docs/envelopes.md): a raw notification whose body is the id, with
/// `X-WNS-TTL` and `X-WNS-Cache-Policy: cache` (WNS keeps the last raw notification for an offline device
/// only with it), and `X-WNS-Priority` from the urgency (time-sensitive and critical 1, active 2, passive 4;
/// a clear 3). With a seal, the body is `sealed:<id>:<sealed value>` (`PreviewSealer`). Raw notifications have no collapse field; WNS keeps only the latest one for an offline device. A clear (read sync) is a raw notification whose body is `clear:` and the ids, comma-separated.
public struct WNSEnvelope: EnvelopeProfile {
    /// Creates the profile.
    public init() {}

    public func request(for push: Push, now: Date) -> WireRequest {
        let body: String
        switch push.kind {
        case .notify:
            if let sealed = PreviewSealer.sealed(push) {
                body = "sealed:\(push.notificationID.description):\(sealed)"
            } else {
                body = push.notificationID.description
            }
        case .clear(let ids): body = "clear:" + ids.map(\.description).joined(separator: ",")
        }
        return WireRequest(
            path: push.target.token,
            headers: [
                WireHeader("x-wns-type", "wns/raw"), WireHeader("content-type", "application/octet-stream"),
                WireHeader("x-wns-ttl", String(push.secondsToLive(now: now))), WireHeader("x-wns-cache-policy", "cache"),
                WireHeader("x-wns-priority", Self.priority(for: push)),
            ],
            body: Data(body.utf8)
        )
    }

    /// WNS's priority (1 high ... 4 very low) of a push.
    static func priority(for push: Push) -> String {
        guard case .notify = push.kind else { return "3" }
        switch push.urgency {
        case .timeSensitive, .critical: return "1"
        case .active: return "2"
        case .passive: return "4"
        }
    }
}
