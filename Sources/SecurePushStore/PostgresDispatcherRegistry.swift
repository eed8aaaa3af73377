import Foundation
import Logging
import PostgresNIO
import SecurePushCore
import SecurePushPostgres

/// Heartbeat rows in `securepush.dispatchers`.
public struct PostgresDispatcherRegistry: DispatcherRegistry {
    let database: StoreDatabase

    /// Creates the registry on an injected client.
    public init(client: any DatabaseClient, logger: Logger) {
        self.database = StoreDatabase(client: client, logger: logger)
    }

    public func heartbeat(_ identity: DispatcherIdentity, sent: Int64, failed: Int64, circuits: [CircuitSnapshot], listener: ListenerStatus?)
        async throws
    {
        let circuitsJSON = String(decoding: try CircuitSnapshot.encoder.encode(circuits), as: UTF8.self)
        try await database.query(
            """
            INSERT INTO securepush.dispatchers (id, host, pid, role, version, sent, failed, circuits, listener_connected, listener_heard_at,
                                                platforms)
            VALUES (\(identity.id), \(identity.host), \(identity.pid), \(identity.role), \(identity.version), \(sent), \(failed),
                    \(circuitsJSON)::jsonb, \(listener?.connected), \(listener?.lastHeard), \(identity.platforms.map(\.rawValue))::text[])
            ON CONFLICT (id) DO UPDATE
            SET last_seen_at = now(), sent = EXCLUDED.sent, failed = EXCLUDED.failed, circuits = EXCLUDED.circuits, stopped_at = NULL,
                listener_connected = EXCLUDED.listener_connected, listener_heard_at = EXCLUDED.listener_heard_at, platforms = EXCLUDED.platforms
            """
        )
    }

    public func liveDispatchers(within: Duration) async throws -> Int {
        let rows = try await database.query(
            """
            SELECT count(*)::bigint FROM securepush.dispatchers
            WHERE stopped_at IS NULL AND last_seen_at > now() - \(within.wholeMilliseconds) * interval '1 millisecond'
            """
        )
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }

    public func stopped(_ identity: DispatcherIdentity, sent: Int64, failed: Int64) async throws {
        try await database.query(
            """
            UPDATE securepush.dispatchers
            SET stopped_at = now(), last_seen_at = now(), sent = \(sent), failed = \(failed), circuits = '[]'::jsonb
            WHERE id = \(identity.id)
            """
        )
    }
}
