import Foundation
import SecurePushCore
import SecurePushStore

/// `201` body of `POST /v1/devices` (and `200` of the rotation): the credential, shown once.
struct DeviceCreatedBody: Encodable {
    var deviceId: String
    var deviceSecret: String
    /// Whether pushes to the device may carry sealed previews (it has a sealing key).
    var sealing: Bool

    init(_ registration: DeviceRegistration) {
        self.deviceId = registration.deviceID.uuidString.lowercased()
        self.deviceSecret = registration.deviceSecret
        self.sealing = registration.sealing
    }
}

/// One entry of `GET /v1/notifications`; `read_at` is `null` while unread (never left out).
struct NotificationItemBody: Encodable {
    var id: String
    var createdAt: Date
    @Nullable var readAt: Date?
    @Nullable var category: String?

    init(_ notification: StoredNotification) {
        id = notification.id.uuidString.lowercased()
        createdAt = notification.createdAt
        readAt = notification.readAt
        category = notification.category
    }
}

/// `GET /v1/notifications`: a page, newest first, and the cursor for the next one (`null` on the last page).
struct NotificationPageBody: Encodable {
    var notifications: [NotificationItemBody]
    @Nullable var nextCursor: String?
}
