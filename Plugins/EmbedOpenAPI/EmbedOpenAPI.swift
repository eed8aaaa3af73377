import Foundation
import PackagePlugin

/// Embeds the repository's `docs/openapi.json` (the API contract) into the target as Swift source, so
/// `securepush serve` answers `GET /openapi.json` with exactly the checked-in document.
@main
struct EmbedOpenAPI: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        let document = context.package.directoryURL.appending(path: "docs").appending(path: "openapi.json")
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedOpenAPI.swift")
        return [
            .buildCommand(
                displayName: "Embedding docs/openapi.json",
                executable: try context.tool(named: "EmbedSQL").url,
                arguments: [output.path(), "--enum=EmbeddedOpenAPI", document.path()],
                inputFiles: [document],
                outputFiles: [output]
            )
        ]
    }
}
