import SecurePushCore

/// How an APNs push (direct, or the `apns` block of an FCM message) presents a new notification.
public enum PushStyle: String, Sendable, Hashable, CaseIterable {
    /// A visible alert with generic text and `mutable-content: 1`, priority 10: a Notification Service
    /// Extension fetches the notification and replaces the text. The default.
    case alert
    /// A background push (`content-available: 1`, priority 5). iOS throttles these to a few an hour and
    /// drops them for force-quit apps and in Low Power Mode: only for apps that do not need every push.
    case silent

    /// The device option that chooses the style (`push_style`).
    public static let deviceOption = "push_style"

    /// The device's `push_style` option when it names a style, else `defaultStyle`.
    public static func of(_ target: PushTarget, default defaultStyle: PushStyle) -> PushStyle {
        target.options[deviceOption].flatMap(PushStyle.init(rawValue:)) ?? defaultStyle
    }
}
