import Foundation
import Logging
import PostgresNIO
import SecurePushCore
import SecurePushPostgres

/// A freshly issued device credential: shown once, stored only as a hash.
public struct DeviceRegistration: Sendable, Hashable {
    /// The device's random id.
    public var deviceID: UUID
    /// 256 random bits, base64url without padding.
    public var deviceSecret: String
    /// The user the push token was bound to before this registration moved it (a re-bind), else `nil`.
    public var reboundFrom: String?
    /// Whether the device has a sealing key now (docs/security.md).
    public var sealing: Bool

    /// Creates a registration.
    public init(deviceID: UUID, deviceSecret: String, reboundFrom: String? = nil, sealing: Bool = false) {
        self.deviceID = deviceID
        self.deviceSecret = deviceSecret
        self.reboundFrom = reboundFrom
        self.sealing = sealing
    }
}

/// A user made more changes of one kind within the last hour than its limit allows (SQLSTATE `SPR01`):
/// registrations and push-address changes (`SECUREPUSH_MAX_REGISTRATIONS_PER_HOUR`: `register_device_checked`,
/// `update_device_token`, `set_sealing_key`), quiet-hours changes (setting `max_quiet_hours_changes_per_hour`:
/// `quiet_hours_changed`).
public struct HourlyLimitReached: Error, Sendable {
    /// Seconds until the oldest change of the hour leaves the window.
    public var retryAfter: Double

    /// The limit the database raised: the seconds are its `DETAIL`.
    init(_ error: PSQLError) {
        self.retryAfter = Double(error.serverInfo?[.detail] ?? "").flatMap { $0.isFinite ? $0 : nil } ?? 60
    }

    /// Runs `body`, turning the database's hourly limit (`SPR01`) into `HourlyLimitReached`.
    static func mapped<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "SPR01" {
            throw HourlyLimitReached(error)
        }
    }
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

/// What replacing a push token did.
public struct TokenUpdate: Sendable, Hashable {
    /// Whether the token had belonged to another user's device (now retired).
    public var rebound: Bool
}

/// Devices: registration through `securepush.register_device`, credential checks, deactivation.
public struct DeviceStore: Sendable {
    let database: StoreDatabase

    /// Creates the store on an injected client.
    public init(client: any DatabaseClient, logger: Logger) {
        self.database = StoreDatabase(client: client, logger: logger)
    }

    /// Registers or re-registers a device; invalid platform options throw `InvalidInput`, a user over the
    /// hourly registration rate `HourlyLimitReached`.
    /// With `sealingKey`, the device's sealing key is set in the same statement (`securepush.set_sealing_key`).
    public func register(
        userID: String, platform: String, token: String, optionsJSON: String, sealingKey: SealingPublicKey? = nil
    ) async throws -> DeviceRegistration {
        let (sealPublic, sealAuth) = Self.bindValues(sealingKey)
        let rows = try await Self.deviceErrors {
            try await database.query(
                """
                SELECT r.*,
                       CASE WHEN \(sealPublic)::bytea IS NULL THEN false
                            ELSE securepush.set_sealing_key(r.device_id, \(sealPublic)::bytea, \(sealAuth)::bytea) END AS sealing
                FROM securepush.register_device_checked(user_id => \(userID), platform => \(platform), token => \(token), options => \(optionsJSON)::jsonb) r
                """
            ).collect()
        }
        guard let row = rows.first else { throw InvalidInput(message: "registration returned nothing") }
        let registered = try RegisterDeviceRow(row: row)
        let sealing: Bool = try NamedRow(row)("sealing")
        return DeviceRegistration(
            deviceID: registered.deviceID, deviceSecret: registered.deviceSecret, reboundFrom: registered.reboundFrom, sealing: sealing)
    }

    /// A sealing key as the two `bytea` bind values of `securepush.set_sealing_key` (both `NULL` without one).
    static func bindValues(_ key: SealingPublicKey?) -> (publicKey: ByteBuffer?, authSecret: ByteBuffer?) {
        (key.map { ByteBuffer(bytes: $0.publicKey) }, key.map { ByteBuffer(bytes: $0.authSecret) })
    }

    /// Runs a registration or token-update statement: the database's refusals of the device (`22023`) become
    /// `InvalidInput`, its hourly limit (`SPR01`) `HourlyLimitReached`.
    static func deviceErrors<T>(_ body: () async throws -> T) async throws -> T {
        try await HourlyLimitReached.mapped { try await invalidInputAsError(body) }
    }

    /// Checks a device credential (`securepush.device_check`: digests compared in the database, a decoy
    /// digest for unknown ids) together with the throttle keys' blocks, and records that the device was
    /// seen, in one round trip.
    public func authenticate(_ proof: DeviceProof) async throws -> DeviceAccess<Void> {
        let rows = try await database.query(
            """
            SELECT * FROM securepush.device_check(\(proof.deviceID), \(proof.secretHashBuffer), \(proof.throttleKeys)::text[])
            """
        ).collect()
        guard let row = rows.first else { return DeviceSessionRow.missing.access(deviceID: proof.deviceID, ()) }
        let checked = try DeviceCheckRow(row: row)
        return DeviceSessionRow(userID: checked.userID, blockedFor: checked.blockedFor).access(deviceID: proof.deviceID, ())
    }

    /// Gives an active device a new secret; the old one stops working at once. `nil` when the device is not active.
    /// The sealing key rotates with the secret: it is replaced by `sealingKey`, or dropped without one.
    public func rotate(deviceID: UUID, sealingKey: SealingPublicKey? = nil) async throws -> DeviceRegistration? {
        let (sealPublic, sealAuth) = Self.bindValues(sealingKey)
        let rows = try await Self.deviceErrors {
            try await database.query(
                "SELECT * FROM securepush.rotate_device_secret(\(deviceID), \(sealPublic)::bytea, \(sealAuth)::bytea)"
            ).collect()
        }
        guard let row = rows.first else { return nil }
        let rotated = try RotateDeviceSecretRow(row: row)
        return DeviceRegistration(deviceID: rotated.deviceID, deviceSecret: rotated.deviceSecret, sealing: rotated.sealing)
    }

    /// Sets (or with `nil` drops) an active device's sealing key; `false` when the device is not active.
    /// A Web Push device's key is refused (`InvalidInput`): its subscription seals its pushes.
    public func setSealingKey(deviceID: UUID, _ sealingKey: SealingPublicKey?) async throws -> Bool {
        let (sealPublic, sealAuth) = Self.bindValues(sealingKey)
        let rows = try await Self.deviceErrors {
            try await database.query("SELECT securepush.set_sealing_key(\(deviceID), \(sealPublic)::bytea, \(sealAuth)::bytea)").collect()
        }
        return try rows.first?.decode(Bool.self) ?? false
    }

    /// The platform of an active device, or `nil`.
    public func platform(deviceID: UUID) async throws -> String? {
        let rows = try await database.query("SELECT platform FROM securepush.devices WHERE id = \(deviceID) AND active").collect()
        return try rows.first?.decode(String.self)
    }

    /// Replaces an active device's push token (and, when given, its platform options), with registration's
    /// validation; another device holding the token is retired. More changes per user and hour than
    /// registrations allow throw `HourlyLimitReached`. Returns `nil` when the device is not active,
    /// else the user the token was taken from when that was another user (for the audit count only).
    public func updateToken(deviceID: UUID, token: String, optionsJSON: String?) async throws -> TokenUpdate? {
        let rows = try await Self.deviceErrors {
            try await database.query(
                "SELECT * FROM securepush.update_device_token(\(deviceID), \(token), \(optionsJSON)::jsonb)"
            ).collect()
        }
        guard let row = rows.first else { return nil }
        return TokenUpdate(rebound: try UpdateDeviceTokenRow(row: row).reboundFrom != nil)
    }

    /// Deactivates the device and cancels its pending deliveries.
    public func deactivate(deviceID: UUID, reason: String) async throws {
        try await database.execute("SELECT securepush.deactivate_device(\(deviceID), \(reason))")
    }
}
