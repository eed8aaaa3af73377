import Foundation
import NIOCore
import PostgresNIO
import SecurePushCore
import SecurePushPostgres

/// A delivery claimed by `securepush.claim_deliveries` (`sql/routines/claim_deliveries.sql`).
public struct ClaimDeliveriesRow: FunctionRow {
    public static let function = "securepush.claim_deliveries(integer, text[], bigint, uuid, uuid, boolean, integer, boolean)"
    public static let columns = [
        "id", "notification_id", "device_id", "platform", "token", "options", "active", "expires_at", "priority", "attempts", "unread",
        "clear_ids", "urgency", "collapse_id", "preview", "seal_public", "seal_auth", "user_id", "traceparent",
    ]

    public var id: UUID
    public var notificationID: UUID
    public var deviceID: UUID
    /// The platform's word (a word this build does not know is refused by the caller, not the decode).
    public var platform: String
    public var token: String
    /// The device's options, a JSON object of strings.
    public var options: String
    public var active: Bool
    public var expiresAt: Date
    public var priority: Int16
    public var attempts: Int32
    /// The user's unread count, when badges are on.
    public var unread: Int64?
    /// A read-sync clear's notification ids; `nil` for a notification's push.
    public var clearIDs: [UUID]?
    public var urgency: Urgency
    public var collapseID: String?
    public var preview: String?
    public var sealPublic: ByteBuffer?
    public var sealAuth: ByteBuffer?
    public var userID: String
    /// The producer's W3C traceparent, if any.
    public var traceParent: String?

    public init(_ row: NamedRow) throws {
        id = try row("id")
        notificationID = try row("notification_id")
        deviceID = try row("device_id")
        platform = try row("platform")
        token = try row("token")
        options = try row("options")
        active = try row("active")
        expiresAt = try row("expires_at")
        priority = try row("priority")
        attempts = try row("attempts")
        unread = try row("unread")
        clearIDs = try row("clear_ids")
        urgency = try row("urgency")
        collapseID = try row("collapse_id")
        preview = try row("preview")
        sealPublic = try row("seal_public")
        sealAuth = try row("seal_auth")
        userID = try row("user_id")
        traceParent = try row("traceparent")
    }
}
