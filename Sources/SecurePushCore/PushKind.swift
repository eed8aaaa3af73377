/// What a push asks the device to do. Every envelope profile switches over it, so a new kind cannot be
/// sent before each platform says how it looks on the wire.
public enum PushKind: Sendable, Hashable {
    /// A new notification: the device fetches it by id and shows it.
    case notify
    /// Read sync: the user read these notifications on another device; remove them (newest first) and
    /// update the badge. Sent as a low-priority background push, never as an alert.
    case clear([NotificationID])
}
