import Foundation
import SecurePushCore

/// The APNs envelope of a push (docs/envelopes.md): `POST /3/device/<token>` with only `secureId` and
/// configured, generic text in the body.
///
/// - alert (the default): `{"aps":{"alert":{"body","title"[,"loc-key","title-loc-key"]},"badge":n,"mutable-content":1},"secureId"}`,
///   `apns-push-type: alert`, priority 10, so a Notification Service Extension can replace the text.
/// - silent: `{"aps":{"content-available":1},"secureId"}`, `apns-push-type: background`, priority 5.
///
/// Both carry `apns-expiration` (the notification's expiry) and `apns-collapse-id` (the id, so a resend
/// replaces the earlier copy).
///
/// A clear (read sync) is always a background push whatever the style: `{"aps":{"content-available":1
/// [,"badge":n]},"secureClear":[ids]}`, `apns-push-type: background`, priority 5, no collapse id (a later
/// clear must not replace an undelivered one).
public struct APNsEnvelope: EnvelopeProfile {
    /// The generic text and the style for devices without a `push_style` option.
    public var settings: EnvelopeSettings
    /// The bundle id for devices without a `topic` option.
    public var defaultTopic: String?

    /// Creates the profile.
    public init(settings: EnvelopeSettings = EnvelopeSettings(), defaultTopic: String? = nil) {
        self.settings = settings
        self.defaultTopic = defaultTopic
    }

    /// The style of `push`: the device's `push_style` option, else the configured style.
    public func style(for push: Push) -> PushStyle {
        PushStyle.of(push.target, default: settings.apnsStyle)
    }

    public func request(for push: Push, now: Date) -> WireRequest {
        let style = style(for: push)
        var headers: [WireHeader] = []
        if let topic = push.target.options["topic"] ?? defaultTopic {
            headers.append(WireHeader("apns-topic", topic))
        }
        headers += apnsHeaders(for: push, style: style)
        return WireRequest(path: "/3/device/\(push.target.token)", headers: headers, body: payload(for: push, style: style).data)
    }

    /// `apns-push-type`, `apns-priority`, `apns-expiration` and `apns-collapse-id`: the headers of a direct
    /// APNs request and of an FCM message's `apns` block.
    func apnsHeaders(for push: Push, style: PushStyle) -> [WireHeader] {
        let id = push.notificationID.description
        switch push.kind {
        case .notify:
            let (type, priority) = style == .alert ? ("alert", "10") : ("background", "5")
            return [
                WireHeader("apns-push-type", type), WireHeader("apns-priority", priority),
                WireHeader("apns-expiration", String(push.expirationEpochSeconds)), WireHeader("apns-collapse-id", id),
            ]
        case .clear:
            return [
                WireHeader("apns-push-type", "background"), WireHeader("apns-priority", "5"),
                WireHeader("apns-expiration", String(push.expirationEpochSeconds)),
            ]
        }
    }

    /// The `aps` dictionary: the alert with the generic text (and the badge), or `content-available`.
    func aps(for push: Push, style: PushStyle) -> EnvelopeJSON {
        switch push.kind {
        case .notify:
            switch style {
            case .silent:
                return .object(["content-available": .int(1)])
            case .alert:
                let alert = settings.alert
                var fields: [String: EnvelopeJSON] = ["title": .string(alert.title), "body": .string(alert.body)]
                if let key = alert.titleLocKey { fields["title-loc-key"] = .string(key) }
                if let key = alert.bodyLocKey { fields["loc-key"] = .string(key) }
                var aps: [String: EnvelopeJSON] = ["alert": .object(fields), "mutable-content": .int(1)]
                if let badge = push.badge { aps["badge"] = .int(badge) }
                return .object(aps)
            }
        case .clear:
            var aps: [String: EnvelopeJSON] = ["content-available": .int(1)]
            if let badge = push.badge { aps["badge"] = .int(badge) }
            return .object(aps)
        }
    }

    /// The whole body: `aps` and `secureId` (a clear: `secureClear`, the ids to remove).
    func payload(for push: Push, style: PushStyle) -> EnvelopeJSON {
        switch push.kind {
        case .notify:
            return .object(["aps": aps(for: push, style: style), "secureId": .string(push.notificationID.description)])
        case .clear(let ids):
            return .object(["aps": aps(for: push, style: style), "secureClear": .array(ids.map { .string($0.description) })])
        }
    }
}
