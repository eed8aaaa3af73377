import Foundation
import PostgresNIO
import SecurePushPostgres

/// A row of `securepush.device_fetch_requests` (`sql/routines/device_fetch_requests.sql`): request `req`'s
/// session and one requested id with what was found for it (no id when the request was refused or asked
/// for none).
public struct DeviceFetchRequestsRow: FunctionRow {
    public static let function = "securepush.device_fetch_requests(uuid[], bytea[], text[], integer[], integer[], uuid[])"
    public static let columns = ["req", "user_id", "blocked_for", "owned", "live", "traceparent"] + StoredNotification.columns

    /// The request's position, 1-based.
    public var request: Int32
    /// The request's session.
    var session: DeviceSessionRow
    /// The requested id, if the row carries one.
    public var id: UUID?
    /// The id is the user's (read now, or expired or purged).
    public var owned: Bool
    /// The notification with its payload, when it was the user's and still live.
    public var notification: StoredNotification?
    /// The producer's W3C traceparent of a notification found (for the fetch's span; never sent to the device).
    public var traceParent: String?

    public init(_ row: NamedRow) throws {
        request = try row("req")
        session = DeviceSessionRow(userID: try row("user_id"), blockedFor: try row("blocked_for"))
        id = try row("id")
        owned = try row("owned", as: Bool?.self) ?? false
        let live = try row("live", as: Bool?.self) ?? false
        notification = live ? try StoredNotification(row) : nil
        traceParent = live ? try row("traceparent") : nil
    }
}
