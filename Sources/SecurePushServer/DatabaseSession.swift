import Logging
import PostgresNIO

/// Runs a short-lived client for one-shot commands (`migrate`, `status`).
public enum DatabaseSession {
    /// Starts a client, runs `body` with it, and shuts the client down.
    public static func withClient<Result: Sendable>(
        _ configuration: DatabaseConfiguration,
        logger: Logger,
        _ body: @Sendable (PostgresClient) async throws -> Result
    ) async throws -> Result {
        let client = configuration.url.makeClient(poolSize: 2, logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }
}
