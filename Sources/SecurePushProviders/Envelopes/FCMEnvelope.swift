import Foundation
import SecurePushCore

/// The FCM HTTP v1 envelope of a push (docs/envelopes.md): a data-only message, high priority on Android,
/// whose data holds `secureId` and the configured generic `title`/`body` (and localization keys, and the
/// badge count) so the app can show a notification at once, and an `apns` block with the APNs envelope
/// for devices that are iPhones (FCM applies `android` only to Android devices and `apns` only to Apple
/// ones, so every message carries both and the device needs no option).
///
/// `POST /v1/projects/<project>/messages:send`; the project is the device's `project` option, else the
/// first configured service account's.
///
/// The data carries `urgency` (the app picks its channel and `NotificationCompat` priority from it) and, with a
/// collapse key, `secureCollapse`, the digest that is also `android.collapse_key` (without one, no collapse key:
/// FCM keeps only four collapse keys per offline device but up to 100 messages without one). A device
/// registered with a Firebase Installation ID is addressed by `message.fid`, one with a registration token by
/// `message.token` (`FCMRecipient`).
///
/// With a seal, the data carries `secureSealed` (as in the APNs envelope; FCM hands it to iOS as a top-level key).
///
/// A clear (read sync) is a normal-priority data message: `data` holds `secureClear` (the ids, comma-separated:
/// FCM data values are strings) and the badge, and the `apns` block is a background push.
public struct FCMEnvelope: EnvelopeProfile {
    /// The generic text and the style of the `apns` block.
    public var settings: EnvelopeSettings
    /// The Firebase project for devices without a `project` option.
    public var defaultProject: String

    /// Creates the profile.
    public init(settings: EnvelopeSettings = EnvelopeSettings(), defaultProject: String) {
        self.settings = settings
        self.defaultProject = defaultProject
    }

    /// The Firebase project `push` is sent through.
    public func project(for push: Push) -> String {
        push.target.options["project"] ?? defaultProject
    }

    public func request(for push: Push, now: Date) -> WireRequest {
        WireRequest(
            path: "/v1/projects/\(project(for: push))/messages:send",
            headers: [WireHeader("content-type", "application/json; charset=utf-8")],
            body: message(for: push, now: now).data
        )
    }

    /// The `{"message": ...}` body.
    func message(for push: Push, now: Date) -> EnvelopeJSON {
        let id = push.notificationID.description
        var data: [String: EnvelopeJSON]
        var android: [String: EnvelopeJSON] = ["ttl": .string("\(push.secondsToLive(now: now))s")]
        switch push.kind {
        case .notify:
            let alert = settings.alert
            data = [
                "secureId": .string(id), "title": .string(alert.title), "body": .string(alert.body), "urgency": .string(push.urgency.rawValue),
            ]
            if let key = alert.titleLocKey { data["title_loc_key"] = .string(key) }
            if let key = alert.bodyLocKey { data["body_loc_key"] = .string(key) }
            if let collapse = push.collapseID { data["secureCollapse"] = .string(collapse) }
            if let sealed = PreviewSealer.sealed(push) { data["secureSealed"] = .string(sealed) }
            // A passive notification need not wake a dozing phone; the rest must.
            android["priority"] = .string(push.urgency == .passive ? "normal" : "high")
            // Only with the producer's key: FCM keeps at most four collapse keys per offline device, while it
            // keeps up to 100 messages that have none.
            if let collapse = push.collapseID { android["collapse_key"] = .string(collapse) }
        case .clear(let ids):
            data = ["secureClear": .string(ids.map(\.description).joined(separator: ","))]
            android["priority"] = .string("normal")
        }
        if let badge = push.badge { data["badge"] = .string(String(badge)) }
        let apnsProfile = APNsEnvelope(settings: settings)
        let style = apnsProfile.style(for: push)
        var apnsHeaders: [String: EnvelopeJSON] = [:]
        for header in apnsProfile.apnsHeaders(for: push, style: style) { apnsHeaders[header.name] = .string(header.value) }
        // FCM delivers `data` as top-level keys of the APNs payload, so `secureId` reaches iOS at the same place.
        let apns: [String: EnvelopeJSON] = [
            "headers": .object(apnsHeaders), "payload": .object(["aps": apnsProfile.aps(for: push, style: style)]),
        ]
        let recipient = FCMRecipient(token: push.target.token)
        return .object([
            "message": .object([
                recipient.field: .string(push.target.token), "data": .object(data), "android": .object(android), "apns": .object(apns),
            ])
        ])
    }
}
