import ArgumentParser
import SecurePushCore

@main
struct SecurePushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "securepush",
        abstract: "Secure push notifications: payloads stay in PostgreSQL, pushes carry only ids.",
        version: SecurePushVersion.current,
        subcommands: [
            ServeCommand.self, MigrateCommand.self, StatusCommand.self, TraceCommand.self, ProbeCommand.self, DevTokenCommand.self, RelayCommand.self,
        ]
    )
}
