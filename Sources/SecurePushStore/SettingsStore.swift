import Foundation
import Logging
import PostgresNIO
import SecurePushCore
import SecurePushPostgres

/// Deployment settings the SQL API reads (the default TTL of `securepush.notifications`, the device cap, read sync).
public struct SettingsStore: Sendable {
    let database: StoreDatabase

    /// Creates the store on an injected client.
    public init(client: any DatabaseClient, logger: Logger) {
        self.database = StoreDatabase(client: client, logger: logger)
    }

    /// Writes the settings the database's SQL reads: the TTL of notifications inserted without
    /// `expires_at`, the cap on active devices per user, read sync (on or off, and its window), and whether critical urgency is allowed.
    public func write(_ settings: DeploymentSettings) async throws {
        try await database.query(Self.query(settings))
    }

    /// `write(_:)` on one connection (the start-up gate's).
    public static func write(_ settings: DeploymentSettings, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(query(settings), logger: logger)
    }

    static func query(_ settings: DeploymentSettings) -> PostgresQuery {
        let ttl = "\(settings.defaultTTL.wholeMilliseconds / 1000) seconds"
        let cap = String(settings.maxDevicesPerUser)
        let readSync = settings.readSync ? "on" : "off"
        let window = "\(settings.readSyncWindow.wholeMilliseconds) milliseconds"
        let registrations = String(settings.maxRegistrationsPerHour)
        let critical = settings.criticalUrgency ? "on" : "off"
        return """
            INSERT INTO securepush.settings (key, value)
            VALUES ('default_ttl', \(ttl)::interval::text), ('max_devices_per_user', \(cap)), ('read_sync', \(readSync)),
                   ('read_sync_window', \(window)::interval::text), ('max_registrations_per_hour', \(registrations)),
                   ('critical_urgency', \(critical))
            ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()
            """
    }
}
