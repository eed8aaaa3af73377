import Logging
import PostgresNIO
import SecurePushPostgres

/// What every store holds: the injected pooled client and the logger its queries log to, with the
/// query shapes the stores share.
struct StoreDatabase: Sendable {
    let client: any DatabaseClient
    let logger: Logger

    /// Runs a statement; its rows are for the caller to read.
    @discardableResult
    func query(_ query: PostgresQuery) async throws -> PostgresRowSequence {
        try await client.run(query, logger: logger)
    }

    /// Runs a statement for its effect, reading its rows to the end: an error the database raises while
    /// executing (after the row description) is thrown here instead of being lost with an unread sequence.
    func execute(_ query: PostgresQuery) async throws {
        _ = try await client.run(query, logger: logger).collect()
    }

    /// Runs a statement whose one row holds one `bigint`: a count.
    func count(_ query: PostgresQuery) async throws -> Int {
        let rows = try await client.run(query, logger: logger).collect()
        return Int(try rows.first?.decode(Int64.self) ?? 0)
    }
}
