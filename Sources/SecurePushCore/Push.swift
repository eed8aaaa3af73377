import Foundation

/// One push to send: the notification id and the device. It has no field that could hold a payload,
/// so no provider can ever put notification content on the wire; a producer-approved preview travels only
/// in `seal`, which the envelopes encrypt to the device.
public struct Push: Sendable, Hashable {
    /// What the push asks the device to do.
    public var kind: PushKind
    /// The notification the device should fetch.
    public var notificationID: NotificationID
    /// Where the push goes.
    public var target: PushTarget
    /// When the notification expires; providers map it onto the platform's TTL/expiration.
    public var expiresAt: Date
    /// The producer's priority (higher is more urgent).
    public var priority: Int
    /// The 1-based attempt number of this delivery.
    public var attempt: Int
    /// The recipient's unread count when the push was claimed (`SECUREPUSH_BADGE=unread`), shown as the
    /// app's badge by the envelopes that carry one; `nil` when badges are off. A count, never content.
    public var badge: Int?
    /// How the notification may interrupt; envelopes map it onto the platform's priority fields.
    public var urgency: Urgency
    /// The opaque per-user digest of the producer's collapse key (32 hex digits, `securepush.collapse_digest`),
    /// when there is one: the platform replaces an earlier push with the same digest instead of stacking it.
    /// Never the key itself.
    public var collapseID: String?
    /// The preview and key to seal (`SECUREPUSH_SEALED_PREVIEWS=on` and a device that can open it); `nil`:
    /// the push is id-only, exactly as without the switch.
    public var seal: PushSeal?
    /// Whether the address's last push failed as a push service's failure would (a timeout, a refused
    /// connection, a 5xx), set by the dispatcher: providers whose connections carry many devices' pushes send
    /// it on a connection apart, so what it does to a connection (a timed-out push resets its stream, and a
    /// push service closes a connection past a rate of resets) cannot fail other devices' pushes.
    public var quarantined: Bool

    /// Creates a push.
    public init(
        kind: PushKind = .notify, notificationID: NotificationID, target: PushTarget, expiresAt: Date, priority: Int = 0, attempt: Int = 1,
        badge: Int? = nil, urgency: Urgency = .active, collapseID: String? = nil, seal: PushSeal? = nil, quarantined: Bool = false
    ) {
        self.kind = kind
        self.notificationID = notificationID
        self.target = target
        self.expiresAt = expiresAt
        self.priority = priority
        self.attempt = attempt
        self.badge = badge
        self.urgency = urgency
        self.collapseID = collapseID
        self.seal = seal
        self.quarantined = quarantined
    }
}
