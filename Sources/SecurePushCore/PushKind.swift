/// What a push asks the device to do. Every envelope profile switches over it, so a new kind cannot be
/// sent before each platform says how it looks on the wire.
///
/// Read sync will add a `clear` kind (the ids a device should remove, sent as a low-priority background
/// push); until then every push announces one new notification.
public enum PushKind: Sendable, Hashable {
    /// A new notification: the device fetches it by id and shows it.
    case notify
}
