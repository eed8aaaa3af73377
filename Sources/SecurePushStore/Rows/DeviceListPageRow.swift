import Foundation
import PostgresNIO
import SecurePushPostgres

/// A row of `securepush.device_list_page` (`sql/routines/device_list_page.sql`): the session and one listed
/// notification (none when the request was refused or the page is empty).
public struct DeviceListPageRow: FunctionRow {
    public static let function = "securepush.device_list_page(uuid, bytea, text[], boolean, integer, bigint, uuid, boolean)"
    public static let columns = ["user_id", "blocked_for", "micros"] + StoredNotification.columns

    /// The session.
    var session: DeviceSessionRow
    /// The listed notification and its cursor, if the row carries one.
    public var item: NotificationSummary?

    public init(_ row: NamedRow) throws {
        session = DeviceSessionRow(userID: try row("user_id"), blockedFor: try row("blocked_for"))
        if let notification = try StoredNotification(row), let micros = try row("micros", as: Int64?.self) {
            item = NotificationSummary(notification: notification, cursor: ListCursor(createdAtMicros: micros, id: notification.id))
        }
    }
}
