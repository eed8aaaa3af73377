import ArgumentParser
import Foundation
import Logging
import SecurePushServer

/// Options every command shares. Flags take precedence over the matching environment variables.
struct CommonOptions: ParsableArguments {
    @Option(name: .customLong("database-url"), help: "PostgreSQL URL (DATABASE_URL).")
    var databaseURL: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error, critical (SECUREPUSH_LOG_LEVEL).")
    var logLevel: Logger.Level?

    /// The database settings alone (what `migrate` and `status` need), or a clear error.
    func loadDatabase() throws -> (DatabaseConfiguration, Logger) {
        let configuration = try configurationError {
            try DatabaseConfiguration(
                values: ConfigurationValues(ProcessInfo.processInfo.environment), databaseURL: databaseURL, logLevel: logLevel,
                defaultLogLevel: .warning)
        }
        return (configuration, Self.bootstrap(configuration.logLevel, configuration.logFormat))
    }

    /// The whole configuration (what `serve` needs), with `overrides` from its flags, or a clear error.
    func load(overrides: SecurePushConfiguration.Overrides) throws -> (SecurePushConfiguration, Logger) {
        var overrides = overrides
        overrides.databaseURL = databaseURL
        overrides.logLevel = logLevel
        let configuration = try configurationError {
            try SecurePushConfiguration(environment: ProcessInfo.processInfo.environment, overrides: overrides)
        }
        return (configuration, Self.bootstrap(configuration.logLevel, configuration.database.logFormat))
    }

    private func configurationError<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw ValidationError("configuration error: \(error)")
        }
    }

    private static func bootstrap(_ level: Logger.Level, _ format: LogFormat) -> Logger {
        LoggingBootstrap.bootstrap(level: level, format: format)
        var logger = Logger(label: "securepush")
        logger.logLevel = level
        return logger
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
extension ServerRole: ExpressibleByArgument {}

/// A duration flag such as `250ms`, `5s` or `1h`.
struct DurationArgument: ExpressibleByArgument {
    let duration: Duration

    init?(argument: String) {
        guard let duration = ConfigurationValues.parseDuration(argument) else { return nil }
        self.duration = duration
    }
}
