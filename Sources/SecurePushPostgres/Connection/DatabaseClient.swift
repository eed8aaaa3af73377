import Logging
import PostgresNIO

/// The database access every store is given: a pool of connections to the writable primary. Implemented by
/// PostgresNIO's `PostgresClient` (one host) and by `PrimaryRouter` (several hosts, following the primary
/// across a failover).
public protocol DatabaseClient: Sendable {
    /// Runs one statement on a pooled connection; its rows are for the caller to read.
    func run(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence
    /// Runs `body` on one connection leased for its duration (the body must not keep the connection).
    func leased<Result: Sendable>(_ body: @Sendable (PostgresConnection) async throws -> Result) async throws -> Result
}

extension PostgresClient: DatabaseClient {
    public func run(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        try await self.query(query, logger: logger)
    }

    public func leased<Result: Sendable>(_ body: @Sendable (PostgresConnection) async throws -> Result) async throws -> Result {
        try await withConnection { connection in try await body(connection) }
    }
}

/// One leased connection seen as a `DatabaseClient`: every statement runs on it, in order, so a store built on it
/// reads inside the transaction the caller opened there (`StatusStore`'s snapshot).
package struct SingleConnectionClient: DatabaseClient {
    let connection: PostgresConnection

    package init(connection: PostgresConnection) {
        self.connection = connection
    }

    package func run(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        try await connection.query(query, logger: logger)
    }

    package func leased<Result: Sendable>(_ body: @Sendable (PostgresConnection) async throws -> Result) async throws -> Result {
        try await body(connection)
    }
}

extension PostgresConnection {
    /// Runs `body` between `begin` and `COMMIT`, rolling back when it throws; the error passes through as it
    /// is. (PostgresNIO's `withTransaction` wraps errors in `PostgresTransactionError`, which would hide the
    /// SQLSTATE that `DatabaseErrorSummary` and `isUnavailable` read, and takes no isolation level.)
    package func inTransaction<Result>(
        _ begin: PostgresQuery = "BEGIN", logger: Logger, _ body: () async throws -> Result
    ) async throws -> Result {
        _ = try await query(begin, logger: logger)
        do {
            let result = try await body()
            _ = try await query("COMMIT", logger: logger)
            return result
        } catch {
            _ = try? await query("ROLLBACK", logger: logger)
            throw error
        }
    }
}
