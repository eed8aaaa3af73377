import Foundation

/// What an id-only push asks the app to do. Parse it from whatever the platform handed the app;
/// the push never carries content in the clear, only ids (and, sealed to the device's key, a preview).
public enum PushMessage: Sendable, Hashable {
    /// A new notification: fetch it by id and show it.
    case notification(UUID)
    /// A new notification with a sealed record: open it (`SecurePushClient.openSealed(_:)`) to show its
    /// preview at once, without the network; fetch by id as for `.notification` when it has none.
    case sealed(UUID, SealedPush)
    /// The user read these notifications on another device: remove them and update the badge.
    case clear([UUID])

    /// An APNs notification's `userInfo` (`secureId` and maybe `secureSealed`, or `secureClear` for a clear).
    /// `nil` when the push is not SecurePush's.
    public init?(apnsUserInfo userInfo: [AnyHashable: Any]) {
        if let clear = Self.ids(userInfo["secureClear"]) {
            self = .clear(clear)
        } else if let id = (userInfo["secureId"] as? String).flatMap(UUID.init(uuidString:)) {
            self = Self.new(id, sealed: userInfo["secureSealed"] as? String)
        } else {
            return nil
        }
    }

    /// An FCM data message (`RemoteMessage.data`: string values; `secureClear` is comma-separated,
    /// `secureSealed` beside `secureId` when sealed).
    public init?(fcmData data: [String: String]) {
        if let clear = Self.ids(data["secureClear"]) {
            self = .clear(clear)
        } else if let id = data["secureId"].flatMap(UUID.init(uuidString:)) {
            self = Self.new(id, sealed: data["secureSealed"])
        } else {
            return nil
        }
    }

    /// A decrypted Web Push message: the Declarative Web Push form (`"web_push": 8030`, the id in
    /// `notification.data.secureId`) or a plain JSON message with `secureId` / `secureClear`. Web Push
    /// is never sealed a second time: a preview (`notification.data.preview`) is the browser's to show,
    /// and the message is `.notification(id)`.
    public init?(webPushData data: Data) {
        guard let message = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return nil }
        var fields = message
        if let notification = message["notification"] as? [String: Any], let declared = notification["data"] as? [String: Any] {
            fields.merge(declared) { _, new in new }
        }
        self.init(apnsUserInfo: Dictionary(uniqueKeysWithValues: fields.map { (AnyHashable($0.key), $0.value) }))
    }

    /// A WNS raw notification's body: the id, `sealed:<id>:<record>`, or `clear:` and comma-separated ids.
    public init?(wnsRaw body: String) {
        let text = body.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix("clear:"), let clear = Self.ids(String(text.dropFirst("clear:".count))) {
            self = .clear(clear)
        } else if text.hasPrefix("sealed:") {
            let parts = text.dropFirst("sealed:".count).split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard let id = UUID(uuidString: String(parts[0])) else { return nil }
            self = Self.new(id, sealed: parts.count == 2 ? String(parts[1]) : nil)
        } else if let id = UUID(uuidString: text) {
            self = .notification(id)
        } else {
            return nil
        }
    }

    /// The new notification's id (`.notification` and `.sealed`); `nil` for `.clear`.
    public var notificationID: UUID? {
        switch self {
        case .notification(let id), .sealed(let id, _): id
        case .clear: nil
        }
    }

    /// `.sealed` when `sealed` is a record's base64url, else `.notification`: a push whose record is
    /// damaged still names a notification the app can fetch.
    static func new(_ id: UUID, sealed: String?) -> PushMessage {
        guard let sealed, let push = SealedPush(id: id, base64URL: sealed) else { return .notification(id) }
        return .sealed(id, push)
    }

    /// Ids from an array of strings or a comma-separated string; `nil` when absent or none is valid.
    static func ids(_ value: Any?) -> [UUID]? {
        let texts: [String]
        if let list = value as? [String] {
            texts = list
        } else if let list = value as? [Any] {
            texts = list.compactMap { $0 as? String }
        } else if let text = value as? String {
            texts = text.split(separator: ",").map(String.init)
        } else {
            return nil
        }
        let ids = texts.compactMap { UUID(uuidString: $0.trimmingCharacters(in: .whitespaces)) }
        return ids.isEmpty ? nil : ids
    }
}
