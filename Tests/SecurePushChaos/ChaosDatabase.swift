import Foundation
import Logging
import PostgresNIO

/// The row's database, reached with short-lived connections of the driver's own (never a pool: during
/// an outage or while the slots are taken, a call fails instead of waiting).
struct ChaosDatabase: Sendable {
    let url: String
    let configuration: PostgresConnection.Configuration
    let logger: Logger

    /// Parses `postgres://user[:password]@host:port/database`.
    init(url: String) throws {
        guard let components = URLComponents(string: url), let host = components.host, let user = components.user else {
            throw ChaosError("cannot read the database URL \(url)")
        }
        let database = String(components.path.dropFirst())
        self.url = url
        self.configuration = PostgresConnection.Configuration(
            host: host, port: components.port ?? 5432, username: user, password: components.password, database: database, tls: .disable)
        var logger = Logger(label: "chaos.db")
        logger.logLevel = .critical
        self.logger = logger
    }

    /// A new connection, within `timeout`.
    func connect(timeout: Duration = .seconds(5)) async throws -> PostgresConnection {
        let (configuration, logger) = (self.configuration, self.logger)
        return try await withTimeout(timeout) {
            try await PostgresConnection.connect(configuration: configuration, id: Int.random(in: 1...Int(Int32.max)), logger: logger)
        }
    }

    /// Runs `body` on a new connection and closes it.
    func with<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        let connection = try await connect()
        do {
            let result = try await body(connection)
            try? await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// The first column of the first row.
    func scalar<T: PostgresDecodable & Sendable>(_ query: PostgresQuery, as type: T.Type = T.self) async throws -> T {
        try await with { connection in
            let rows = try await connection.query(query, logger: logger)
            for try await value in rows.decode(T.self) { return value }
            throw ChaosError("the query returned no row")
        }
    }

    /// Runs a statement.
    func execute(_ query: PostgresQuery) async throws {
        try await with { connection in _ = try await connection.query(query, logger: logger).collect() }
    }

    /// Polls `condition` until it holds or `timeout` passes; returns whether it held.
    func eventually(timeout: Duration, every interval: Duration = .milliseconds(250), _ condition: () async throws -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if (try? await condition()) == true { return true }
            try? await Task.sleep(for: interval)
        }
        return (try? await condition()) == true
    }
}

/// Runs `body`, failing with a timeout error when it takes longer than `timeout`.
func withTimeout<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw ChaosError("timed out after \(timeout)") }
        return value
    }
}
