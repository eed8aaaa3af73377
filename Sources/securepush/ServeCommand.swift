import ArgumentParser
import SecurePushServer

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the dispatcher and/or the HTTP API until SIGTERM/SIGINT."
    )

    @OptionGroup var common: CommonOptions

    @Option(help: "api, dispatcher or all (SECUREPUSH_ROLE).")
    var role: String?

    @Option(help: "HTTP bind address (SECUREPUSH_HOST).")
    var host: String?

    @Option(help: "HTTP port (SECUREPUSH_PORT).")
    var port: String?

    @Option(help: "Pushes in flight per lane (SECUREPUSH_CONCURRENCY).")
    var concurrency: String?

    @Option(name: .customLong("batch-size"), help: "Deliveries claimed per statement (SECUREPUSH_BATCH_SIZE).")
    var batchSize: String?

    @Option(name: .customLong("poll-interval"), help: "Fallback poll interval, e.g. 1s (SECUREPUSH_POLL_INTERVAL).")
    var pollInterval: String?

    @Option(help: "Comma-separated platforms to push to (SECUREPUSH_PROVIDERS).")
    var providers: String?

    func run() async throws {
        let (configuration, logger) = try common.load(overrides: [
            "SECUREPUSH_ROLE": role,
            "SECUREPUSH_HOST": host,
            "SECUREPUSH_PORT": port,
            "SECUREPUSH_CONCURRENCY": concurrency,
            "SECUREPUSH_BATCH_SIZE": batchSize,
            "SECUREPUSH_POLL_INTERVAL": pollInterval,
            "SECUREPUSH_PROVIDERS": providers,
        ])
        try await SecurePushServer(configuration: configuration, logger: logger).run()
    }
}
