import Logging
import PostgresNIO
import SecurePushCore
import SecurePushPostgres
import SecurePushStore

/// What `securepush serve` checks before any service starts: a writable primary is reachable among
/// `DATABASE_URL`'s hosts (a standby is named as one, not mistaken for an unmigrated database), it is fully
/// migrated, and the settings producers' SQL reads (the default TTL) are written. On one dedicated
/// connection, under one deadline, so a missing or unmigrated database fails start-up within seconds; what
/// may yet come true (unreachable, a standby, migrations pending) is thrown as `StartupNotReady`, which
/// `StartupWait` retries for `SECUREPUSH_STARTUP_WAIT`.
struct StartupGate {
    let configuration: DatabaseConfiguration
    let timeout: Duration
    /// The platforms a dispatcher pushes through a relay (recorded for the registration trigger, migration
    /// 024); `nil` for a process without a dispatcher, which leaves the record alone.
    var relayPlatforms: [Platform]? = nil
    let logger: Logger

    func check() async throws {
        let (configuration, logger, relayPlatforms) = (self.configuration, self.logger, self.relayPlatforms)
        let connector = DatabaseConnector(url: configuration.url)
        do {
            try await withDeadline(timeout) {
                let (connection, _) = try await connector.connectPrimary(id: 0, logger: logger)
                do {
                    try await Self.check(connection, configuration: configuration, logger: logger)
                    if let relayPlatforms {
                        let queued = try await RelayOutboxStore.setRelayPlatforms(relayPlatforms, on: connection, logger: logger)
                        if queued > 0 { logger.notice("devices queued for the relay", metadata: ["relay.queued": "\(queued)"]) }
                    }
                    try await connection.close()
                } catch {
                    try? await connection.close()
                    throw error
                }
            }
        } catch let error as ConfigurationError {
            throw error
        } catch let error as StartupNotReady {
            throw error
        } catch let error as NoWritablePrimary where error.onlyStandbys {
            throw StartupNotReady(
                "the database at DATABASE_URL is a read-only standby (\(error.outcomes.joined(separator: "; "))): point DATABASE_URL at the primary, or list every node (postgres://user@host1,host2,host3/db) so SecurePush finds the primary"
            )
        } catch let error as MigrationError {
            throw ConfigurationError("the database schema does not match this build: \(error.message)")
        } catch {
            if let error = error as? NoWritablePrimary {
                throw StartupNotReady(
                    "cannot use the database at DATABASE_URL (\(error)): check that it exists and is reachable, then run `securepush migrate`")
            }
            logger.databaseError("start-up check failed", error, level: .debug)
            throw StartupNotReady(
                "cannot use the database at DATABASE_URL (\(DatabaseErrorSummary(error))): check that it exists and is reachable, then run `securepush migrate`"
            )
        }
    }

    private static func check(_ connection: PostgresConnection, configuration: DatabaseConfiguration, logger: Logger) async throws {
        let pending = try await Migrator.securePush(try Migration.bundled()).pending(on: connection, logger: logger)
        try StartupNotReady.unlessMigrated(pending)
        try await SettingsStore.write(configuration.deploymentSettings, on: connection, logger: logger)
    }
}
