import Foundation
import SecurePushStore

/// A device's reads of its user's notifications: the seam between the HTTP handlers and
/// `NotificationStore` (SQL). Another user's notification is `notFound`, exactly like an unknown id.
public protocol NotificationRepository: Sendable {
    /// The notifications among `ids`, in the order given, each marked read (`NotificationStore.fetch`).
    func fetch(ids: [UUID], as proof: DeviceProof) async throws -> DeviceAccess<[FetchedNotification]>
    /// One page of the device user's notifications, newest first (`NotificationStore.list`).
    func list(as proof: DeviceProof, unreadOnly: Bool, limit: Int, after cursor: ListCursor?, payloads: Bool) async throws
        -> DeviceAccess<[NotificationSummary]>
}

extension NotificationStore: NotificationRepository {}
