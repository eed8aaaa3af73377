import Logging
import PostgresNIO
import SecurePushPostgres
import SecurePushStore

/// Runs a short-lived client for one-shot commands (`migrate`, `status`, `probe`): a `PrimaryRouter` on the
/// writable primary among the URL's hosts.
public enum DatabaseSession {
    /// Starts a client, waits (at most `timeout`) for the writable primary, runs `body` with it, and shuts
    /// the client down. Throws `NoWritablePrimary` when no host is a writable primary within `timeout`.
    public static func withClient<Result: Sendable>(
        _ configuration: DatabaseConfiguration,
        logger: Logger,
        timeout: Duration = .seconds(15),
        _ body: @Sendable (any DatabaseClient) async throws -> Result
    ) async throws -> Result {
        let router = configuration.url.makeRouter(poolSize: 2, logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await router.run() }
            defer { group.cancelAll() }
            try await router.waitForPrimary(timeout: timeout)
            return try await body(router)
        }
    }
}
