import ArgumentParser
import SecurePushPostgres
import SecurePushServer
import SecurePushStore

struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply the sql/ migrations (idempotent; safe to run from several processes at once).",
        discussion: """
            With SECUREPUSH_STARTUP_WAIT (e.g. 5m) a database that is unreachable or a standby is tried again \
            every 2 s for that long. --check applies nothing: it exits 0 once no migration of this build is \
            pending (waiting for another process's migration as long as SECUREPUSH_STARTUP_WAIT allows), \
            else 1, naming the pending ones (a Kubernetes initContainer's wait for the migration Job).
            """
    )

    @OptionGroup var common: CommonOptions

    @Flag(help: "Apply nothing; succeed once the schema has every migration of this build.")
    var check = false

    func run() async throws {
        let (configuration, logger) = try common.loadDatabase()
        let migrator = Migrator.securePush(try Migration.bundled())
        let check = self.check
        let applied = try await StartupWait(limit: configuration.startupWait).withDatabase(configuration, logger: logger) { client in
            if check {
                try StartupNotReady.unlessMigrated(try await migrator.pending(client: client, logger: logger))
                return [String]()
            }
            let applied = try await migrator.migrate(client: client, logger: logger)
            try await SettingsStore(client: client, logger: logger).write(configuration.deploymentSettings)
            return applied
        }
        print(MigrationSummary.line("securepush", applied: applied, known: migrator.migrations.count))
    }
}
