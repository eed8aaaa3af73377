import Foundation

/// `201` body of `POST /v1/devices`.
struct DeviceCreatedBody: Encodable {
    var deviceId: String
    var deviceSecret: String
}

/// One entry of `GET /v1/notifications`.
struct NotificationItemBody: Encodable {
    var id: String
    var createdAt: Date
    var readAt: Date?
}

/// `GET /v1/notifications`: a page, newest first, and the cursor for the next one.
struct NotificationPageBody: Encodable {
    var notifications: [NotificationItemBody]
    var nextCursor: String?
}
