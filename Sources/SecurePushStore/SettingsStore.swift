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

    /// Sets the TTL applied to notifications inserted without `expires_at`.
    public func setDefaultTTL(_ ttl: Duration) async throws {
        try await database.query(Self.defaultTTLQuery(ttl))
    }

    /// `setDefaultTTL(_:)` on one connection (the start-up gate's).
    public static func setDefaultTTL(_ ttl: Duration, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(defaultTTLQuery(ttl), logger: logger)
    }

    static func defaultTTLQuery(_ ttl: Duration) -> PostgresQuery {
        let value = "\(ttl.wholeMilliseconds / 1000) seconds"
        return """
            INSERT INTO securepush.settings (key, value) VALUES ('default_ttl', \(value)::interval::text)
            ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()
            """
    }
}
