import Foundation
import PostgresNIO
import SecurePushPostgres

/// The row of `securepush.update_device_token` (`sql/routines/update_device_token.sql`).
public struct UpdateDeviceTokenRow: FunctionRow {
    public static let function = "securepush.update_device_token(uuid, text, jsonb)"
    public static let columns = ["device_id", "rebound_from"]

    public var deviceID: UUID
    /// The user the token was taken from, when it was another user's.
    public var reboundFrom: String?

    public init(_ row: NamedRow) throws {
        deviceID = try row("device_id")
        reboundFrom = try row("rebound_from")
    }
}
