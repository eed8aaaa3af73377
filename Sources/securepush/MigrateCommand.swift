import ArgumentParser
import SecurePushServer
import SecurePushStore

struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply the sql/ migrations (idempotent; safe to run from several processes at once)."
    )

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let (configuration, logger) = try common.loadDatabase()
        let migrator = Migrator(migrations: try Migration.bundled())
        let applied = try await DatabaseSession.withClient(configuration, logger: logger) { client in
            let applied = try await migrator.migrate(client: client, logger: logger)
            try await SettingsStore(client: client, logger: logger).write(configuration.deploymentSettings)
            return applied
        }
        if applied.isEmpty {
            print("securepush: schema is up to date (\(migrator.migrations.count) migrations)")
        } else {
            print("securepush: applied \(applied.joined(separator: ", "))")
        }
    }
}
