import Foundation
import SecurePushCore

/// The APNs envelope of a push (docs/envelopes.md): `POST /3/device/<token>` with only `secureId` and
/// configured, generic text in the body.
///
/// - alert (the default): `{"aps":{"alert":{"body","title"[,"loc-key","title-loc-key"]},"badge":n,
///   "interruption-level":...,"mutable-content":1},"secureId"[,"secureCollapse"]}`, `apns-push-type: alert`,
///   so a Notification Service Extension can replace the text. The urgency sets `interruption-level`
///   (`passive`, `active`, `time-sensitive`, `critical` with a critical `sound`) and the priority (5 for
///   passive, else 10).
/// - silent: `{"aps":{"content-available":1},"secureId"[,"secureCollapse"]}`, `apns-push-type: background`,
///   priority 5.
///
/// Both carry `apns-expiration` (the notification's expiry) and `apns-collapse-id`: the producer's collapse
/// digest when there is one (so the phone replaces the earlier notification of that key), else the id (so a
/// resend replaces the earlier copy). `secureCollapse` repeats the digest for the app.
///
/// With a seal (`SECUREPUSH_SEALED_PREVIEWS=on` and a device sealing key), the body also carries `secureSealed`:
/// the id and preview sealed to the device, always `PreviewSealer.sealedLength` characters; the extension opens
/// it and shows the preview in place of the generic text.
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
            let (type, priority) = style == .alert ? ("alert", push.urgency == .passive ? "5" : "10") : ("background", "5")
            return [
                WireHeader("apns-push-type", type), WireHeader("apns-priority", priority),
                WireHeader("apns-expiration", String(push.expirationEpochSeconds)), WireHeader("apns-collapse-id", push.collapseID ?? id),
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
                var aps: [String: EnvelopeJSON] = [
                    "alert": .object(fields), "mutable-content": .int(1), "interruption-level": .string(Self.interruptionLevel(push.urgency)),
                ]
                if let badge = push.badge { aps["badge"] = .int(badge) }
                if push.urgency == .critical {
                    aps["sound"] = .object(["critical": .int(1), "name": .string("default"), "volume": .int(1)])
                }
                return .object(aps)
            }
        case .clear:
            var aps: [String: EnvelopeJSON] = ["content-available": .int(1)]
            if let badge = push.badge { aps["badge"] = .int(badge) }
            return .object(aps)
        }
    }

    /// APNs' `interruption-level` for an urgency.
    static func interruptionLevel(_ urgency: Urgency) -> String {
        switch urgency {
        case .passive: "passive"
        case .active: "active"
        case .timeSensitive: "time-sensitive"
        case .critical: "critical"
        }
    }

    /// The whole body: `aps`, `secureId` and the collapse digest (a clear: `secureClear`, the ids to remove).
    func payload(for push: Push, style: PushStyle) -> EnvelopeJSON {
        switch push.kind {
        case .notify:
            var body: [String: EnvelopeJSON] = ["aps": aps(for: push, style: style), "secureId": .string(push.notificationID.description)]
            if let collapse = push.collapseID { body["secureCollapse"] = .string(collapse) }
            if let sealed = PreviewSealer.sealed(push) { body["secureSealed"] = .string(sealed) }
            return .object(body)
        case .clear(let ids):
            return .object(["aps": aps(for: push, style: style), "secureClear": .array(ids.map { .string($0.description) })])
        }
    }
}
