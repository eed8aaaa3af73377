import ArgumentParser
import Foundation
import SecurePushAPI
import SecurePushPostgres
import SecurePushReports
import SecurePushServer
import SecurePushStore

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Print the pipeline's status from the database (the same report as GET /status)."
    )

    @OptionGroup var common: CommonOptions

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    func run() async throws {
        let (configuration, logger) = try common.loadDatabase()
        let report = try await DatabaseSession.withClient(configuration, logger: logger) { client in
            let pending = try await Migrator.securePush(try Migration.bundled()).pending(client: client, logger: logger)
            return try await StatusStore(
                client: client, staleAfter: configuration.dispatcherStaleAfter, thresholds: configuration.statusThresholds, logger: logger
            )
            .report(pendingMigrations: pending)
        }
        if json {
            print(String(decoding: try StatusReport.jsonEncoder.encode(report), as: UTF8.self))
        } else {
            print(StatusTable(report: report).render())
        }
    }
}
