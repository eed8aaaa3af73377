import Foundation
import PostgresNIO

/// A row of `securepush.device_fetch_batch` (`sql/routines/device_fetch_batch.sql`): for request `req`
/// (1-based), either its session (`id` is `nil`: the device's user, or the seconds its keys are blocked) or
/// one requested notification.
public struct DeviceFetchBatchRow: FunctionRow {
    public static let function = "securepush.device_fetch_batch(uuid[], bytea[], text[], integer[], integer[], uuid[])"
    public static let columns = ["req", "user_id", "blocked_for", "id", "owned", "live", "payload", "created_at", "read_at", "category", "preview"]

    public var request: Int32
    public var userID: String?
    public var blockedFor: Double?
    public var id: UUID?
    public var owned: Bool?
    public var live: Bool?
    public var payload: String?
    public var createdAt: Date?
    public var readAt: Date?
    public var category: String?
    public var preview: String?

    public init(_ row: NamedRow) throws {
        request = try row("req")
        userID = try row("user_id")
        blockedFor = try row("blocked_for")
        id = try row("id")
        owned = try row("owned")
        live = try row("live")
        payload = try row("payload")
        createdAt = try row("created_at")
        readAt = try row("read_at")
        category = try row("category")
        preview = try row("preview")
    }
}
