import Crypto
import Foundation
import Logging
import PostgresNIO
import SecurePushCore

/// A freshly issued device credential: shown once, stored only as a hash.
public struct DeviceRegistration: Sendable, Hashable {
    /// The device's random id.
    public var deviceID: UUID
    /// 256 random bits, base64url without padding.
    public var deviceSecret: String
}

/// The device a valid credential belongs to.
public struct AuthenticatedDevice: Sendable, Hashable {
    /// The device id.
    public var deviceID: UUID
    /// The app user the device belongs to.
    public var userID: String
}

/// Input the database rejected, with a message fit for the caller (SQLSTATE 22023 from `validate_device`).
public struct InvalidInput: Error, CustomStringConvertible, Sendable {
    /// What is wrong, in one sentence.
    public var message: String
    public var description: String { message }
}

/// Devices: registration through `securepush.register_device`, credential checks, deactivation.
public struct DeviceStore: Sendable {
    let database: StoreDatabase

    /// A hash no secret can match, compared against when the device id is unknown so both paths cost the same.
    private static let decoyHash = [UInt8](SHA256.hash(data: Data("securepush-decoy".utf8)))

    /// Creates the store on an injected client.
    public init(client: PostgresClient, logger: Logger) {
        self.database = StoreDatabase(client: client, logger: logger)
    }

    /// Registers or re-registers a device; invalid platform options throw `InvalidInput`.
    public func register(userID: String, platform: String, token: String, optionsJSON: String) async throws -> DeviceRegistration {
        do {
            let rows = try await database.query(
                """
                SELECT device_id, device_secret
                FROM securepush.register_device(user_id => \(userID), platform => \(platform), token => \(token), options => \(optionsJSON)::jsonb)
                """
            ).collect()
            guard let row = rows.first else { throw InvalidInput(message: "registration returned nothing") }
            let (id, secret) = try row.decode((UUID, String).self)
            return DeviceRegistration(deviceID: id, deviceSecret: secret)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "22023" {
            throw InvalidInput(message: error.serverInfo?[.message] ?? "invalid device")
        }
    }

    /// Checks a device credential in constant time (`device` is `nil` when unknown, wrong, or deactivated)
    /// and, in the same round trip, how long any of `throttleKeys` is still blocked (seconds, 0 when none):
    /// a blocked caller is answered 429 whatever the credential says.
    public func authenticate(deviceID: UUID, secret: [UInt8], throttleKeys: [String]) async throws -> (
        device: AuthenticatedDevice?, blockedFor: Double
    ) {
        let rows = try await database.query(
            """
            SELECT d.user_id, d.secret_hash, d.active, b.blocked
            FROM (SELECT securepush.auth_blocked_for(\(throttleKeys)::text[]) AS blocked) b
            LEFT JOIN securepush.devices d ON d.id = \(deviceID)
            """
        ).collect()
        guard let row = rows.first else { return (nil, 0) }
        let (userID, storedHash, active, blocked) = try row.decode((String?, ByteBuffer?, Bool?, Double).self)
        let device = Self.check(userID: userID, storedHash: storedHash, active: active ?? false, deviceID: deviceID, secret: secret)
        return (device, blocked)
    }

    /// The constant-time comparison: an unknown device compares against the decoy hash, so both paths cost the same.
    static func check(userID: String?, storedHash: ByteBuffer?, active: Bool, deviceID: UUID, secret: [UInt8]) -> AuthenticatedDevice? {
        let presented = [UInt8](SHA256.hash(data: secret))
        let stored = storedHash.map { Array($0.readableBytesView) } ?? Self.decoyHash
        let matches = ConstantTime.equal(presented, stored)
        guard matches, active, storedHash != nil, let userID else { return nil }
        return AuthenticatedDevice(deviceID: deviceID, userID: userID)
    }

    /// Gives an active device a new secret; the old one stops working at once. `nil` when the device is not active.
    public func rotate(deviceID: UUID) async throws -> DeviceRegistration? {
        let rows = try await database.query(
            "SELECT device_id, device_secret FROM securepush.rotate_device_secret(\(deviceID))"
        ).collect()
        guard let row = rows.first else { return nil }
        let (id, secret) = try row.decode((UUID, String).self)
        return DeviceRegistration(deviceID: id, deviceSecret: secret)
    }

    /// Records that the device was seen (at most once a minute, to keep reads cheap).
    public func touch(deviceID: UUID) async throws {
        try await database.query(
            """
            UPDATE securepush.devices SET last_seen_at = now()
            WHERE id = \(deviceID) AND (last_seen_at IS NULL OR last_seen_at < now() - interval '1 minute')
            """
        )
    }

    /// Deactivates the device and cancels its pending deliveries.
    public func deactivate(deviceID: UUID, reason: String) async throws {
        try await database.query("SELECT securepush.deactivate_device(\(deviceID), \(reason))")
    }
}

/// Constant-time comparison of secrets and hashes.
public enum ConstantTime {
    /// True when both byte arrays are equal; the time taken depends only on the lengths.
    public static func equal(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices {
            difference |= lhs[index] ^ rhs[index]
        }
        return difference == 0
    }
}
