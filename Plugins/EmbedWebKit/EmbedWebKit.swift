import Foundation
import PackagePlugin

/// Embeds the Web kit (`clients/web/*.js`) and its demo page (`clients/web/demo/*`) into the target as
/// Swift source, so `securepush serve` can serve the demo at `/demo/` (`SECUREPUSH_DEMO=on`) from the
/// binary alone, with exactly the checked-in files.
@main
struct EmbedWebKit: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        let web = context.package.directoryURL.appending(path: "clients").appending(path: "web")
        let files = try [web, web.appending(path: "demo")].flatMap { folder in
            try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
                .filter { ["js", "html", "css"].contains($0.pathExtension) }
                .sorted { $0.lastPathComponent < $1.lastPathComponent }
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedWebKit.swift")
        return [
            .buildCommand(
                displayName: "Embedding the Web kit (clients/web)",
                executable: try context.tool(named: "EmbedSQL").url,
                arguments: [output.path(), "--enum=EmbeddedWebKit"] + files.map { $0.path() },
                inputFiles: files,
                outputFiles: [output]
            )
        ]
    }
}
