import Foundation
import Logging
import PostgresNIO

/// Deployment settings the SQL API reads (the default TTL of `securepush.notifications`).
public struct SettingsStore: Sendable {
    let database: StoreDatabase

    /// Creates the store on an injected client.
    public init(client: PostgresClient, logger: Logger) {
        self.database = StoreDatabase(client: client, logger: logger)
    }

    /// Writes the settings producers' SQL and the registration function read: the TTL of notifications
    /// inserted without `expires_at`, and the cap on active devices per user.
    public func write(defaultTTL: Duration, maxDevicesPerUser: Int) async throws {
        try await database.query(Self.query(defaultTTL: defaultTTL, maxDevicesPerUser: maxDevicesPerUser))
    }

    /// `write(defaultTTL:maxDevicesPerUser:)` on one connection (the start-up gate's).
    public static func write(defaultTTL: Duration, maxDevicesPerUser: Int, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(query(defaultTTL: defaultTTL, maxDevicesPerUser: maxDevicesPerUser), logger: logger)
    }

    static func query(defaultTTL: Duration, maxDevicesPerUser: Int) -> PostgresQuery {
        let ttl = "\(defaultTTL.wholeMilliseconds / 1000) seconds"
        let cap = String(maxDevicesPerUser)
        return """
            INSERT INTO securepush.settings (key, value)
            VALUES ('default_ttl', \(ttl)::interval::text), ('max_devices_per_user', \(cap))
            ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()
            """
    }
}
