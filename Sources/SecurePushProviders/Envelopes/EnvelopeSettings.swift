/// What every envelope profile is configured with: the generic text and the APNs style for devices
/// without a `push_style` option.
public struct EnvelopeSettings: Sendable, Hashable {
    /// The generic text of visible pushes.
    public var alert: GenericAlert
    /// The style of APNs pushes (and of the `apns` block of FCM messages) for devices without a
    /// `push_style` option (`SECUREPUSH_APNS_PUSH_STYLE`).
    public var apnsStyle: PushStyle

    /// Creates settings; the defaults are the default text and the alert style.
    public init(alert: GenericAlert = GenericAlert(), apnsStyle: PushStyle = .alert) {
        self.alert = alert
        self.apnsStyle = apnsStyle
    }
}
