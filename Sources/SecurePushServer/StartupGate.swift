import Logging
import PostgresNIO
import SecurePushCore
import SecurePushStore

/// What `securepush serve` checks before any service starts: the database is reachable and fully
/// migrated, and the settings producers' SQL reads (the default TTL) are written. On one dedicated
/// connection, under one deadline, so a missing or unmigrated database fails start-up within seconds.
struct StartupGate {
    let configuration: DatabaseConfiguration
    let timeout: Duration
    let logger: Logger

    func check() async throws {
        let (configuration, logger) = (self.configuration, self.logger)
        let connectionConfiguration = try configuration.url.connectionConfiguration()
        do {
            try await withDeadline(timeout) {
                let connection = try await PostgresConnection.connect(configuration: connectionConfiguration, id: 0, logger: logger)
                do {
                    try await Self.check(connection, configuration: configuration, logger: logger)
                    try await connection.close()
                } catch {
                    try? await connection.close()
                    throw error
                }
            }
        } catch let error as ConfigurationError {
            throw error
        } catch let error as MigrationError {
            throw ConfigurationError("the database schema does not match this build: \(error.message)")
        } catch {
            logger.databaseError("start-up check failed", error, level: .error)
            throw ConfigurationError(
                "cannot use the database at DATABASE_URL (\(DatabaseErrorSummary(error))): check that it exists and is reachable, then run `securepush migrate`"
            )
        }
    }

    private static func check(_ connection: PostgresConnection, configuration: DatabaseConfiguration, logger: Logger) async throws {
        let pending = try await Migrator(migrations: try Migration.bundled()).pending(on: connection, logger: logger)
        guard pending.isEmpty else {
            throw ConfigurationError("the database needs migrations \(pending.joined(separator: ", ")); run `securepush migrate` first")
        }
        try await SettingsStore.write(configuration.deploymentSettings, on: connection, logger: logger)
    }
}
