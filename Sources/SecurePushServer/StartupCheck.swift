import Logging
import PostgresNIO
import SecurePushStore
import ServiceLifecycle

/// Refuses to serve against an unmigrated database and publishes the configured default TTL.
struct StartupCheck: Service {
    let client: PostgresClient
    let configuration: SecurePushConfiguration
    let logger: Logger

    func run() async throws {
        let pending = try await Migrator(migrations: try Migration.bundled()).pending(client: client, logger: logger)
        guard pending.isEmpty else {
            throw ConfigurationError("the database needs migrations \(pending.joined(separator: ", ")); run `securepush migrate` first")
        }
        try await SettingsStore(client: client, logger: logger).setDefaultTTL(configuration.defaultTTL)
        logger.info(
            "securepush serving",
            metadata: [
                "role": "\(configuration.role.rawValue)",
                "providers": "\(configuration.providers.map(\.rawValue).joined(separator: ","))",
            ]
        )
        try await gracefulShutdown()
    }
}
