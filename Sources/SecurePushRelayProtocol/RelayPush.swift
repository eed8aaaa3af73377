import Foundation
import SecurePushCore

/// One push as a self-hosted server hands it to the relay: what the platform needs and nothing else. It has
/// no field for a payload, a preview in clear, a user id, a device id, a category or a collapse key: the
/// envelope fields SecurePush already puts on the wire (the notification id or the ids to clear, the badge,
/// the urgency, the collapse digest, a sealed value of fixed size), the token and the platform options.
public struct RelayPush: Codable, Sendable, Hashable {
    /// `apns`, `fcm` or `wns`.
    public var platform: String
    /// The device's push token (registered with the relay by the same installation).
    public var token: String
    /// Platform options (APNs environment and topic, push style, ...), as the device registered them.
    public var options: [String: String]
    /// The notification to announce (for a `clear`, the first id cleared).
    public var id: UUID
    /// The ids to remove from the notification center: a read-sync clear; `nil` for a notification.
    public var clear: [UUID]?
    /// When the notification expires (seconds since 1970): the platform's TTL.
    public var expires: Int64
    /// The producer's priority (higher is more urgent).
    public var priority: Int
    /// The unread count for the app's badge, when badges are on.
    public var badge: Int?
    /// `active`, `time_sensitive`, `passive` or `critical`.
    public var urgency: String
    /// The per-user collapse digest (32 hex digits), never the producer's key.
    public var collapse: String?
    /// The attempt number on the self-hosted side (for the relay's logs and the platform's nothing).
    public var attempt: Int
    /// The id and preview sealed to the device's key by the self-hosted server (`SECUREPUSH_SEALED_PREVIEWS`):
    /// a value of fixed length (base64url) the envelope carries as it is; the relay sees neither preview nor key.
    public var sealed: String?

    /// The relay push of `push`; `sealed` is set by the caller that can seal (the self-hosted server's relay client).
    public init(_ push: Push, sealed: String? = nil) {
        self.sealed = sealed
        self.platform = push.target.platform.rawValue
        self.token = push.target.token
        self.options = push.target.options
        self.id = push.notificationID.uuid
        if case .clear(let ids) = push.kind {
            self.clear = ids.map(\.uuid)
        }
        // Inside the window the relay accepts (`RelayPushLimits.expires`): a notification that lives longer
        // than a year is announced with a year's TTL rather than refused.
        let latest = Date().addingTimeInterval(RelayPushLimits.longestTTL - 60)
        self.expires = Int64(Int(saturating: min(push.expiresAt, latest).timeIntervalSince1970))
        self.priority = push.priority
        self.badge = push.badge
        self.urgency = push.urgency.rawValue
        self.collapse = push.collapseID
        self.attempt = push.attempt
    }

    /// The `Push` the relay sends for it, to a device it does not know (a zero device id; the relay has none).
    /// Every field is checked against `RelayPushLimits` first: a value out of range is this push's refusal
    /// (`RelayWireError`, naming the field), never a trap further on.
    public func push(now: Date = Date()) throws -> Push {
        guard let platform = Platform(rawValue: platform), RelayPush.relayedPlatforms.contains(platform) else {
            throw RelayWireError("platform \(platform) is not relayed (apns, fcm and wns are; Web Push needs no relay)")
        }
        guard let urgency = Urgency(rawValue: urgency) else { throw RelayWireError("urgency \(urgency) is unknown") }
        try RelayPushLimits.check(token: token, platform: platform)
        try RelayPushLimits.check(options: options, platform: platform)
        try RelayPushLimits.check(expires: expires, now: now)
        try RelayPushLimits.check(priority: priority, attempt: attempt, badge: badge)
        if let clear, !(1...RelayPushLimits.maxClearIDs).contains(clear.count) {
            throw RelayWireError("clear must list 1 to \(RelayPushLimits.maxClearIDs) notification ids")
        }
        if let collapse, !(collapse.utf8.count == 32 && collapse.allSatisfy(\.isHexDigit)) {
            throw RelayWireError("collapse must be 32 hex digits")
        }
        if let sealed, sealed.isEmpty || sealed.utf8.count > 4096 {
            throw RelayWireError("sealed must be a sealed value (base64url, at most 4096 characters)")
        }
        let kind: PushKind = clear.map { .clear($0.map(NotificationID.init)) } ?? .notify
        return Push(
            kind: kind, notificationID: NotificationID(id),
            target: PushTarget(deviceID: Self.noDevice, platform: platform, token: token, options: options),
            expiresAt: Date(timeIntervalSince1970: TimeInterval(expires)), priority: priority, attempt: max(1, attempt), badge: badge,
            urgency: urgency, collapseID: collapse, seal: sealed.map { PushSeal(previewJSON: nil, key: nil, sealed: $0) })
    }

    /// The device id of every push the relay sends: it knows no device (all zeros).
    static let noDevice = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// The platforms a relay pushes to. Web Push is not among them: each server has its own VAPID key.
    public static let relayedPlatforms: Set<Platform> = [.apns, .fcm, .wns]
}

/// A relay request or answer that breaks the wire format.
public struct RelayWireError: Error, CustomStringConvertible, Sendable {
    /// What is wrong (names fields, never a token).
    public var description: String

    /// Creates an error.
    public init(_ description: String) { self.description = description }
}
