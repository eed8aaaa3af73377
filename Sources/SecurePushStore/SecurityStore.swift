import Foundation
import Logging
import PostgresNIO
import SecurePushCore
import SecurePushPostgres

/// A security event kept in `securepush.audit_log` (ids and reasons only).
public enum AuditEvent: String, Sendable, CaseIterable {
    case deviceRegistered = "device_registered"
    case deviceRotated = "device_rotated"
    case deviceRevoked = "device_revoked"
    case deviceRetired = "device_retired"
    case throttled
    case tokenInvalid = "token_invalid"
    case deviceRebound = "device_rebound"
    case registrationLimited = "registration_limited"
    case deviceDeleted = "device_deleted"
    /// A device replaced its push address with its credential (`PUT /v1/devices/current/token`).
    case deviceTokenUpdated = "device_token_updated"
    /// A device set its sealing key (written by `securepush.set_sealing_key`, sql/routines/set_sealing_key.sql).
    case sealingKeySet = "sealing_key_set"
    /// A device cleared its sealing key (`securepush.set_sealing_key` with none).
    case sealingKeyCleared = "sealing_key_cleared"
}

/// How failed authentication is throttled: `freeFailures` within `window` cost nothing; each further
/// one blocks the key for `baseBlock`, doubling, at most `maxBlock`.
public struct AuthThrottlePolicy: Sendable, Hashable {
    /// Failures per key allowed before blocking (`SECUREPUSH_AUTH_FREE_FAILURES`).
    public var freeFailures: Int
    /// The first block (`SECUREPUSH_AUTH_BLOCK`).
    public var baseBlock: Duration
    /// The longest block (`SECUREPUSH_AUTH_BLOCK_MAX`).
    public var maxBlock: Duration
    /// Failures older than this are forgotten (`SECUREPUSH_AUTH_FAILURE_WINDOW`).
    public var window: Duration

    /// The defaults: 5 free failures per 15 minutes, then 1 s, 2 s, 4 s, ... up to 15 minutes.
    public init(freeFailures: Int = 5, baseBlock: Duration = .seconds(1), maxBlock: Duration = .seconds(900), window: Duration = .seconds(900)) {
        self.freeFailures = freeFailures
        self.baseBlock = baseBlock
        self.maxBlock = maxBlock
        self.window = window
    }
}

/// Throttling of failed authentication (shared by every API process through PostgreSQL) and the audit log.
public struct SecurityStore: Sendable {
    let database: StoreDatabase

    /// Creates the store on an injected client.
    public init(client: any DatabaseClient, logger: Logger) {
        self.database = StoreDatabase(client: client, logger: logger)
    }

    /// How long any of `keys` is still blocked, in seconds (0 when none is).
    public func blockedFor(_ keys: [String]) async throws -> Double {
        let rows = try await database.query("SELECT securepush.auth_blocked_for(\(keys)::text[])").collect()
        return try rows.first?.decode(Double.self) ?? 0
    }

    /// Records a failure for each key; returns the block it started (seconds, 0 when none).
    public func recordFailure(_ keys: [String], policy: AuthThrottlePolicy) async throws -> Double {
        let rows = try await database.query(
            """
            SELECT securepush.auth_failed(
                \(keys)::text[], \(policy.freeFailures)::integer,
                \(policy.baseBlock.wholeMilliseconds) * interval '1 millisecond',
                \(policy.maxBlock.wholeMilliseconds) * interval '1 millisecond',
                \(policy.window.wholeMilliseconds) * interval '1 millisecond')
            """
        ).collect()
        return try rows.first?.decode(Double.self) ?? 0
    }

    /// Appends a security event.
    public func audit(_ event: AuditEvent, userID: String? = nil, deviceID: UUID? = nil, reason: String? = nil) async throws {
        try await database.execute("SELECT securepush.audit(\(event.rawValue), \(userID), \(deviceID), \(reason))")
    }
}
