/// How a notification may interrupt (`securepush.notifications.urgency`, checked by
/// `notifications_urgency_valid` in `sql/016_delivery_controls.sql`). Each envelope maps it onto its
/// platform (docs/envelopes.md): APNs `interruption-level` and priority, FCM Android priority, Web Push
/// `Urgency`, WNS `X-WNS-Priority`. A fixed word, never content.
public enum Urgency: String, Sendable, Hashable, Codable, CaseIterable {
    /// Shown quietly: no sound, no lighting up the screen; delivered when convenient.
    case passive
    /// The default: shown with the user's normal sound and banner.
    case active
    /// Breaks through Focus and quiet hours: a login code, a fraud alert.
    case timeSensitive = "time_sensitive"
    /// Breaks through mute (APNs critical alerts need Apple's entitlement); refused by the database unless
    /// `SECUREPUSH_CRITICAL_URGENCY=on`.
    case critical

    /// Whether the user's quiet hours hold it back (passive and active ones) or not.
    public var respectsQuietHours: Bool { self == .passive || self == .active }
}
