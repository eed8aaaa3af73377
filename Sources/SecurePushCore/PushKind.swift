/// What a push asks the device to do. Every envelope profile switches over it, so a new kind cannot be
/// sent before each platform says how it looks on the wire.
public enum PushKind: Sendable, Hashable {
    /// A new notification: the device fetches it by id and shows it.
    case notify
    /// Read sync: the user read these notifications on another device; remove them (newest first) and
    /// update the badge. Sent as a low-priority background push, never as an alert.
    case clear([NotificationID])

    /// The kind's word in SQL (`securepush.deliveries.kind`, `delivery_log.kind`).
    public enum Name: String, Sendable, Hashable, CaseIterable {
        case notify
        case clear
    }

    /// This kind's word.
    public var name: Name {
        switch self {
        case .notify: .notify
        case .clear: .clear
        }
    }
}
