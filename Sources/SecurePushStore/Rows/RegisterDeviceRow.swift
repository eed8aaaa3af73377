import Foundation
import PostgresNIO
import SecurePushPostgres

/// The row of `securepush.register_device_checked` (`sql/routines/register_device_checked.sql`).
public struct RegisterDeviceRow: FunctionRow {
    public static let function = "securepush.register_device_checked(text, text, text, jsonb)"
    public static let columns = ["device_id", "device_secret", "rebound_from"]

    public var deviceID: UUID
    /// The new device's secret, shown once.
    public var deviceSecret: String
    /// The user the token was taken from, when it was another user's.
    public var reboundFrom: String?

    public init(_ row: NamedRow) throws {
        deviceID = try row("device_id")
        deviceSecret = try row("device_secret")
        reboundFrom = try row("rebound_from")
    }
}
