import Foundation

/// What `POST /v1/devices` needs to push to this device: the platform, its token and options
/// (the API's registration schemas in docs/openapi.json list every option per platform).
public struct DeviceRegistration: Sendable, Hashable, Encodable {
    /// The request body's fields.
    public var fields: [String: JSONValue]

    /// A registration from raw fields (for options this type has no helper for).
    public init(fields: [String: JSONValue]) {
        self.fields = fields
    }

    /// APNs, with the device token as `didRegisterForRemoteNotificationsWithDeviceToken` gives it.
    public static func apns(token: Data, sandbox: Bool = false, topic: String? = nil) -> Self {
        var fields: [String: JSONValue] = [
            "platform": .string("apns"),
            "token": .string(token.map { String(format: "%02x", $0) }.joined()),
            "environment": .string(sandbox ? "sandbox" : "production"),
        ]
        if let topic { fields["topic"] = .string(topic) }
        return Self(fields: fields)
    }

    /// FCM, with the registration token from `FirebaseMessaging`.
    public static func fcm(token: String) -> Self {
        Self(fields: ["platform": .string("fcm"), "token": .string(token)])
    }

    /// WNS, with the channel URI from `PushNotificationChannelManager`.
    public static func wns(channelURI: String) -> Self {
        Self(fields: ["platform": .string("wns"), "token": .string(channelURI)])
    }

    /// Web Push, with a subscription's endpoint and keys.
    public static func webPush(endpoint: String, p256dh: String, auth: String) -> Self {
        Self(fields: [
            "platform": .string("webpush"),
            "subscription": .object(["endpoint": .string(endpoint), "keys": .object(["p256dh": .string(p256dh), "auth": .string(auth)])]),
        ])
    }

    /// The same registration with one more option (`push_style`, `app`, ... as the API documents).
    public func with(_ option: String, _ value: String) -> Self {
        var copy = self
        copy.fields[option] = .string(value)
        return copy
    }

    public func encode(to encoder: any Encoder) throws {
        try JSONValue.object(fields).encode(to: encoder)
    }
}
