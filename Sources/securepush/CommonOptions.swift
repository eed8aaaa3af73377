import ArgumentParser
import Foundation
import Logging
import SecurePushServer

/// Options every command shares. Flags override the matching environment variables.
struct CommonOptions: ParsableArguments {
    @Option(name: .customLong("database-url"), help: "PostgreSQL URL (DATABASE_URL).")
    var databaseURL: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error (SECUREPUSH_LOG_LEVEL).")
    var logLevel: String?

    /// The environment with the given flag values merged over it.
    func environment(merging overrides: [String: String?] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        let all = overrides.merging(["DATABASE_URL": databaseURL, "SECUREPUSH_LOG_LEVEL": logLevel]) { first, _ in first }
        for (key, value) in all {
            if let value { environment[key] = value }
        }
        return environment
    }

    /// Loads the configuration or exits with a clear message.
    func load(overrides: [String: String?] = [:]) throws -> (SecurePushConfiguration, Logger) {
        do {
            let configuration = try SecurePushConfiguration(environment: environment(merging: overrides))
            LoggingBootstrap.bootstrap(level: configuration.logLevel)
            var logger = Logger(label: "securepush")
            logger.logLevel = configuration.logLevel
            return (configuration, logger)
        } catch {
            throw ValidationError("configuration error: \(error)")
        }
    }
}
