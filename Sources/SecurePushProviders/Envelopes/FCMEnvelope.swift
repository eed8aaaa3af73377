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
        switch push.kind {
        case .notify:
            let alert = settings.alert
            var data: [String: EnvelopeJSON] = ["secureId": .string(id), "title": .string(alert.title), "body": .string(alert.body)]
            if let key = alert.titleLocKey { data["title_loc_key"] = .string(key) }
            if let key = alert.bodyLocKey { data["body_loc_key"] = .string(key) }
            if let badge = push.badge { data["badge"] = .string(String(badge)) }
            let android: [String: EnvelopeJSON] = [
                "priority": .string("high"), "ttl": .string("\(push.secondsToLive(now: now))s"), "collapse_key": .string(id),
            ]
            let apnsProfile = APNsEnvelope(settings: settings)
            let style = apnsProfile.style(for: push)
            var apnsHeaders: [String: EnvelopeJSON] = [:]
            for header in apnsProfile.apnsHeaders(for: push, style: style) { apnsHeaders[header.name] = .string(header.value) }
            // FCM delivers `data` as top-level keys of the APNs payload, so `secureId` reaches iOS at the same place.
            let apns: [String: EnvelopeJSON] = [
                "headers": .object(apnsHeaders), "payload": .object(["aps": apnsProfile.aps(for: push, style: style)]),
            ]
            return .object([
                "message": .object([
                    "token": .string(push.target.token), "data": .object(data), "android": .object(android), "apns": .object(apns),
                ])
            ])
        }
    }
}
