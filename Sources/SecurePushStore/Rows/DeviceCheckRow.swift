import PostgresNIO
import SecurePushPostgres

/// The row of `securepush.device_check` (`sql/routines/device_check.sql`): the device's user when its
/// credential is right, and the seconds its throttle keys are blocked.
public struct DeviceCheckRow: FunctionRow {
    public static let function = "securepush.device_check(uuid, bytea, text[])"
    public static let columns = ["user_id", "blocked_for"]

    public var userID: String?
    public var blockedFor: Double?

    public init(_ row: NamedRow) throws {
        userID = try row("user_id")
        blockedFor = try row("blocked_for")
    }
}
