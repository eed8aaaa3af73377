import Foundation
import PackagePlugin

/// Embeds the repository's `sql/*.sql` migrations into the target as Swift source, so the
/// `securepush` binary carries its schema and can be copied anywhere.
@main
struct EmbedMigrations: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        let sqlDirectory = context.package.directoryURL.appending(path: "sql")
        let files = try FileManager.default.contentsOfDirectory(atPath: sqlDirectory.path())
            // Migrations are `NNN_description.sql` (Migration.isMigrationFileName); `schema.sql` is the generated dump.
            .filter { name in name.hasSuffix(".sql") && name.prefix(while: \.isNumber).count > 0 && name.drop(while: \.isNumber).hasPrefix("_") }
            .sorted()
            .map { sqlDirectory.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedMigrations.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) SQL migrations",
                executable: try context.tool(named: "EmbedSQL").url,
                arguments: [output.path()] + files.map { $0.path() },
                inputFiles: files,
                outputFiles: [output]
            )
        ]
    }
}
