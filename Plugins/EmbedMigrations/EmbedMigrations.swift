import Foundation
import PackagePlugin

/// Embeds migrations into the target as Swift source, so the `securepush` binary carries its schemas and can be
/// copied anywhere: the repository's `sql/*.sql` into SecurePushStore (`EmbeddedMigrations`), the push relay's
/// `sql/relay/*.sql` into SecurePushRelay (`EmbeddedRelayMigrations`).
@main
struct EmbedMigrations: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        let root = context.package.directoryURL.appending(path: "sql")
        if target.name == "SecurePushRelay" {
            return [try command(context, directory: root.appending(path: "relay"), enumName: "EmbeddedRelayMigrations", label: "relay migrations")]
        }
        return [try command(context, directory: root, enumName: "EmbeddedMigrations", label: "SQL migrations")]
    }

    private func command(_ context: PluginContext, directory: URL, enumName: String, label: String) throws -> Command {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path())
            // Migrations are `NNN_description.sql` (Migration.isMigrationFileName); `schema.sql` is the generated dump.
            .filter { name in name.hasSuffix(".sql") && name.prefix(while: \.isNumber).count > 0 && name.drop(while: \.isNumber).hasPrefix("_") }
            .sorted()
            .map { directory.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL.appending(path: "\(enumName).swift")
        return .buildCommand(
            displayName: "Embedding \(files.count) \(label)",
            executable: try context.tool(named: "EmbedSQL").url,
            arguments: [output.path(), "--enum=\(enumName)"] + files.map { $0.path() },
            inputFiles: files,
            outputFiles: [output]
        )
    }
}
