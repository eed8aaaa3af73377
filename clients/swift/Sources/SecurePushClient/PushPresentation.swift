import Foundation

/// How a push asks to be shown, beside its id (`PushMessage`): the opaque collapse digest that replaces an
/// earlier notification of the same producer key, and the urgency word. Neither is content: the digest is
/// an HMAC the server computed, the urgency one of `passive`, `active`, `time_sensitive`, `critical`.
public struct PushPresentation: Sendable, Hashable {
    /// The collapse digest (32 hex digits), when the producer set a collapse key.
    public var collapseID: String?
    /// The urgency word, when the platform carries it (FCM and Web Push; on APNs the system applies it).
    public var urgency: String?

    /// From an APNs `userInfo` (`secureCollapse`).
    public init(apnsUserInfo userInfo: [AnyHashable: Any]) {
        self.collapseID = Self.digest(userInfo["secureCollapse"])
        self.urgency = nil
    }

    /// From an FCM data message (`secureCollapse`, `urgency`).
    public init(fcmData data: [String: String]) {
        self.collapseID = Self.digest(data["secureCollapse"])
        self.urgency = data["urgency"]
    }

    /// From a decrypted Web Push message (`notification.data.collapse`, `notification.data.urgency`).
    public init(webPushData data: Data) {
        let message = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        let declared = (message?["notification"] as? [String: Any])?["data"] as? [String: Any]
        self.collapseID = Self.digest(declared?["collapse"])
        self.urgency = declared?["urgency"] as? String
    }

    /// The identifier to show notification `id` under (`UNNotificationRequest.identifier`, an Android
    /// notification tag): the collapse digest when there is one, so a newer notification of the same key
    /// replaces the shown one instead of stacking, else the id.
    public func identifier(for id: UUID) -> String {
        collapseID ?? id.uuidString.lowercased()
    }

    /// A digest as the server writes it, else `nil`.
    static func digest(_ value: Any?) -> String? {
        guard let text = value as? String, text.count == 32, text.allSatisfy(\.isHexDigit) else { return nil }
        return text.lowercased()
    }
}
