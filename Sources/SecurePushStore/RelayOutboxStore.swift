import Foundation
import Logging
import PostgresNIO
import SecurePushCore
import SecurePushPostgres

/// The queue of registrations to hand to a push relay (`securepush.relay_outbox`, migration 024): filled by
/// a trigger on devices for the relayed platforms, drained in order by the dispatchers' relay sync.
public struct RelayOutboxStore: RelayOutbox, Sendable {
    let client: any DatabaseClient
    let logger: Logger

    /// A store on `client`.
    public init(client: any DatabaseClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Records the relayed platforms (queuing every active device of a newly relayed one); returns how many were queued.
    public static func setRelayPlatforms(_ platforms: [Platform], on connection: PostgresConnection, logger: Logger) async throws -> Int {
        let rows = try await connection.query("SELECT securepush.set_relay_platforms(\(platforms.map(\.rawValue))::text[])", logger: logger).collect()
        return Int(try rows.first?.decode(Int32.self) ?? 0)
    }

    /// Takes the oldest `limit` changes in one transaction that only one process holds at a time (so changes
    /// reach the relay in order), runs `deliver` with them, and deletes them once it returns; a `deliver` that
    /// throws leaves them queued. Returns how many were delivered (0 when another process holds the queue).
    public func drain(limit: Int, _ deliver: @Sendable ([RelayRegistrationChange]) async throws -> Void) async throws -> Int {
        try await client.leased { connection in
            try await connection.inTransaction(logger: logger) {
                guard try await connection.takeTurn("relay_outbox", logger: logger) else { return 0 }
                let rows = try await connection.query(
                    "SELECT id, platform, token, action FROM securepush.relay_outbox ORDER BY id LIMIT \(Int32(clamping: limit))", logger: logger)
                var changes: [RelayRegistrationChange] = []
                for try await (id, platform, token, action) in rows.decode((Int64, String, String, String).self) {
                    guard let action = RelayRegistrationChange.Action(rawValue: action) else { continue }
                    changes.append(RelayRegistrationChange(id: id, platform: platform, token: token, action: action))
                }
                guard !changes.isEmpty else { return 0 }
                try await deliver(changes)
                // The rows taken, not a range: a row with a smaller id may commit after this read.
                _ = try await connection.query("DELETE FROM securepush.relay_outbox WHERE id = ANY (\(changes.map(\.id))::bigint[])", logger: logger)
                return changes.count
            }
        }
    }

    /// Whether a change of this token still waits to be handed to the relay.
    public func isPending(platform: Platform, token: String) async throws -> Bool {
        let rows = try await client.run("SELECT securepush.relay_change_pending(\(platform.rawValue), \(token))", logger: logger).collect()
        return try rows.first?.decode(Bool.self) ?? false
    }

    /// How many changes wait (for `/status` and the sync's log).
    public func count() async throws -> Int {
        let rows = try await client.run("SELECT count(*)::bigint FROM securepush.relay_outbox", logger: logger).collect()
        return Int(try rows.first?.decode(Int64.self) ?? 0)
    }
}
