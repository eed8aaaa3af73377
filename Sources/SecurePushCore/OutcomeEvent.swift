import Foundation

/// One outcome event as `securepush.events_after` returns it (never a payload byte): the webhook's body
/// carries these, with the JSON keys of the SQL columns.
public struct OutcomeEvent: Sendable, Hashable, Encodable {
    /// Where a reader continues after this event (`xid:position`).
    public var cursor: String
    /// When it happened.
    public var at: Date
    public var notificationID: UUID
    /// The device, except for `muted` (a notification that got no delivery).
    public var deviceID: UUID?
    public var platform: String?
    public var event: DeliveryEventKind
    /// The platform's message id for `pushed`; the reason for `undelivered`, `expired`, `superseded`; the
    /// category for `muted`.
    public var detail: String?

    /// An event.
    public init(
        cursor: String, at: Date, notificationID: UUID, deviceID: UUID?, platform: String?, event: DeliveryEventKind, detail: String?
    ) {
        self.cursor = cursor
        self.at = at
        self.notificationID = notificationID
        self.deviceID = deviceID
        self.platform = platform
        self.event = event
        self.detail = detail
    }

    enum CodingKeys: String, CodingKey {
        case cursor, at, notificationID = "notification_id", deviceID = "device_id", platform, event, detail
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(cursor, forKey: .cursor)
        try container.encode(APITimestamp.string(at), forKey: .at)
        try container.encode(notificationID.uuidString.lowercased(), forKey: .notificationID)
        try container.encode(deviceID?.uuidString.lowercased(), forKey: .deviceID)
        try container.encode(platform, forKey: .platform)
        try container.encode(event, forKey: .event)
        try container.encode(detail, forKey: .detail)
    }
}
