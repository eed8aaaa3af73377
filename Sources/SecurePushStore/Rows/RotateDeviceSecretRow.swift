import Foundation
import PostgresNIO
import SecurePushPostgres

/// The row of `securepush.rotate_device_secret` with a sealing key (`sql/routines/rotate_device_secret.sql`).
public struct RotateDeviceSecretRow: FunctionRow {
    public static let function = "securepush.rotate_device_secret(uuid, bytea, bytea)"
    public static let columns = ["device_id", "device_secret", "sealing"]

    public var deviceID: UUID
    public var deviceSecret: String
    /// Whether the device has a sealing key now.
    public var sealing: Bool

    public init(_ row: NamedRow) throws {
        deviceID = try row("device_id")
        deviceSecret = try row("device_secret")
        sealing = try row("sealing")
    }
}
