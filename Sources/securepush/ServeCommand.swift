import ArgumentParser
import SecurePushServer

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the dispatcher and/or the HTTP API until SIGTERM/SIGINT."
    )

    @OptionGroup var common: CommonOptions

    @Option(help: "api, dispatcher or all (SECUREPUSH_ROLE).")
    var role: ServerRole?

    @Option(help: "HTTP bind address (SECUREPUSH_HOST).")
    var host: String?

    @Option(help: "HTTP port (SECUREPUSH_PORT).")
    var port: Int?

    @Option(help: "Pushes in flight per lane (SECUREPUSH_CONCURRENCY).")
    var concurrency: Int?

    @Option(name: .customLong("batch-size"), help: "Deliveries claimed per statement (SECUREPUSH_BATCH_SIZE).")
    var batchSize: Int?

    @Option(name: .customLong("poll-interval"), help: "Fallback poll interval, e.g. 1s (SECUREPUSH_POLL_INTERVAL).")
    var pollInterval: DurationArgument?

    @Option(help: "Comma-separated platforms to push to (SECUREPUSH_PROVIDERS).")
    var providers: String?

    func run() async throws {
        var overrides = SecurePushConfiguration.Overrides()
        overrides.role = role
        overrides.host = host
        overrides.port = port
        overrides.concurrency = concurrency
        overrides.batchSize = batchSize
        overrides.pollInterval = pollInterval?.duration
        overrides.providers = providers
        let (configuration, logger) = try common.load(overrides: overrides)
        try await SecurePushServer(configuration: configuration, logger: logger).run()
    }
}
