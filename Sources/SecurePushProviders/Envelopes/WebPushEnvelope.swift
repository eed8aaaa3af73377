import Foundation
import SecurePushCore

/// The Web Push envelope of a push (docs/envelopes.md): a Declarative Web Push message, encrypted by the
/// provider (RFC 8291), with `TTL`, `Urgency` and `Topic` (the id, so a resend replaces an undelivered copy).
///
/// The plaintext is `{"app_badge":n,"mutable":true,"notification":{"body","data":{"secureId","urgency"
/// [,"collapse"]},"navigate"[,"silent"],"tag","title"},"web_push":8030}`: Safari 18.4+ shows the generic notification without a service worker
/// (tapping it opens `navigate`), and because it is `mutable` a service worker may fetch the notification
/// and show it instead; browsers without declarative support hand the same JSON to the service worker's
/// `push` event. `Urgency` follows the urgency (passive: low and `silent`, active: normal, time-sensitive and
/// critical: high); with a collapse key, the digest is the `Topic`, the `tag` and `data.collapse`, so a newer
/// notification of that key replaces the shown one. A clear (read sync) is the plain message `{"secureClear":[ids]}` with `Urgency: low`.
///
/// With a seal (`SECUREPUSH_SEALED_PREVIEWS=on`) the message is its own seal: the preview travels inside it as
/// `notification.data.preview`, its `title` and `body` strings become the notification's (so Safari shows them
/// without a service worker), and the provider pads the plaintext to `sealedBucket` bytes, so every sealed
/// record has one size. A message that would not fit with its preview is sent without it.
public struct WebPushEnvelope: EnvelopeProfile {
    /// The padded plaintext of a sealed Web Push message, in bytes (the record is 103 bytes more).
    public static let sealedBucket = 3072

    /// The generic text.
    public var settings: EnvelopeSettings
    /// The `navigate` URL (`SECUREPUSH_WEBPUSH_NAVIGATE_URL`); `{id}` in it is replaced by the id.
    public var navigateURL: String

    /// Creates the profile.
    public init(settings: EnvelopeSettings = EnvelopeSettings(), navigateURL: String) {
        self.settings = settings
        self.navigateURL = navigateURL
    }

    /// The request before encryption: the endpoint, the headers and the plaintext. The provider encrypts the
    /// body and adds `Content-Encoding: aes128gcm` and the VAPID `Authorization`.
    public func request(for push: Push, now: Date) -> WireRequest {
        let ttl = WireHeader("ttl", String(push.secondsToLive(now: now)))
        guard case .notify = push.kind else {
            // A clear: low urgency, no topic (a later clear must not replace an undelivered one).
            return WireRequest(path: push.target.token, headers: [ttl, WireHeader("urgency", "low")], body: plaintext(for: push))
        }
        // A Topic is at most 32 base64url characters: the collapse digest (32 hex digits) or the id's hex.
        let topic = push.collapseID ?? push.notificationID.uuid.uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        return WireRequest(
            path: push.target.token,
            headers: [ttl, WireHeader("urgency", Self.urgencyHeader(push.urgency)), WireHeader("topic", topic)],
            body: plaintext(for: push)
        )
    }

    /// The preview's `title` and `body` strings, when it has them.
    static func titleAndBody(_ preview: String) -> (title: String?, body: String?) {
        let object = (try? JSONSerialization.jsonObject(with: Data(preview.utf8))) as? [String: Any]
        return (object?["title"] as? String, object?["body"] as? String)
    }

    /// RFC 8030's `Urgency` for an urgency.
    static func urgencyHeader(_ urgency: Urgency) -> String {
        switch urgency {
        case .passive: "low"
        case .active: "normal"
        case .timeSensitive, .critical: "high"
        }
    }

    /// The declarative message's bytes: with the preview when there is one and the message still fits
    /// `sealedBucket` (serialized once: the bytes measured are the bytes sent).
    func plaintext(for push: Push) -> Data {
        if case .notify = push.kind, let preview = push.seal?.previewJSON {
            let sealed = message(for: push, preview: preview).data
            if sealed.count <= Self.sealedBucket { return sealed }
        }
        return message(for: push, preview: nil).data
    }

    /// The declarative message, with `preview` (JSON text of an object) inside it.
    func message(for push: Push, preview: String?) -> EnvelopeJSON {
        let id = push.notificationID.description
        switch push.kind {
        case .notify:
            var data: [String: EnvelopeJSON] = ["secureId": .string(id), "urgency": .string(push.urgency.rawValue)]
            if let collapse = push.collapseID { data["collapse"] = .string(collapse) }
            let shown: (title: String?, body: String?) = preview.map(Self.titleAndBody) ?? (nil, nil)
            if let preview { data["preview"] = .raw(preview) }
            var notification: [String: EnvelopeJSON] = [
                "title": .string(shown.title ?? settings.alert.title), "body": .string(shown.body ?? settings.alert.body),
                "navigate": .string(navigateURL.replacingOccurrences(of: "{id}", with: id)), "tag": .string(push.collapseID ?? id),
                "data": .object(data),
            ]
            if push.urgency == .passive { notification["silent"] = .bool(true) }
            var message: [String: EnvelopeJSON] = ["web_push": .int(8030), "notification": .object(notification), "mutable": .bool(true)]
            if let badge = push.badge { message["app_badge"] = .int(badge) }
            return .object(message)
        case .clear(let ids):
            // Not declarative (it shows nothing): the service worker closes the notifications it names.
            return .object(["secureClear": .array(ids.map { .string($0.description) })])
        }
    }
}
