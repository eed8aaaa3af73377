import Foundation
import PostgresNIO

/// A row of `securepush.device_list` (`sql/routines/device_list.sql`): the session (`id` is `nil`) or one
/// listed notification.
public struct DeviceListRow: FunctionRow {
    public static let function = "securepush.device_list(uuid, bytea, text[], boolean, integer, bigint, uuid, boolean)"
    public static let columns = ["user_id", "blocked_for", "id", "created_at", "read_at", "micros", "payload", "category", "preview"]

    public var userID: String?
    public var blockedFor: Double?
    public var id: UUID?
    public var createdAt: Date?
    public var readAt: Date?
    /// `created_at` in microseconds (the list cursor).
    public var micros: Int64?
    public var payload: String?
    public var category: String?
    public var preview: String?

    public init(_ row: NamedRow) throws {
        userID = try row("user_id")
        blockedFor = try row("blocked_for")
        id = try row("id")
        createdAt = try row("created_at")
        readAt = try row("read_at")
        micros = try row("micros")
        payload = try row("payload")
        category = try row("category")
        preview = try row("preview")
    }
}
