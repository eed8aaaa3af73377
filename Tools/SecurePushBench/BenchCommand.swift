import ArgumentParser
import Foundation
import Logging
import PostgresNIO
import SecurePushCore
import SecurePushDispatcher
import SecurePushPostgres
import SecurePushProviders
import SecurePushServer
import SecurePushStore
import ServiceLifecycle
import Synchronization

/// `securepush-bench`: the measurements `ops/bench` prints. Not a test: it asserts nothing.
@main
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "securepush-bench",
        abstract: "Measure SecurePush's drain throughput and commit-to-push latency on a real PostgreSQL.",
        subcommands: [DrainBench.self, LatencyBench.self, DeviceSimulator.self, ResetBench.self]
    )
}

/// Shared set-up: the database from DATABASE_URL, migrated and emptied.
struct BenchDatabase {
    let url: DatabaseURL
    /// DATABASE_URL as given (for child processes such as pgbench).
    let rawURL: String
    let logger: Logger

    init() throws {
        guard let raw = ProcessInfo.processInfo.environment["DATABASE_URL"] else {
            throw ValidationError("DATABASE_URL is not set (ops/bench sets it)")
        }
        self.url = try DatabaseURL(raw)
        self.rawURL = raw
        var logger = Logger(label: "securepush.bench")
        logger.logLevel = .error
        self.logger = logger
    }

    /// Empties every table a bench row fills: the one list (`ops/bench` empties them with `securepush-bench reset`).
    static let emptyTables: PostgresQuery = """
        TRUNCATE securepush.deliveries, securepush.delivery_log, securepush.fetches, securepush.notifications,
            securepush.fan_out_queue, securepush.devices, securepush.dispatchers, securepush.badge_changes
        """

    func withClient<T: Sendable>(_ body: @Sendable (PostgresClient) async throws -> T) async throws -> T {
        let client = url.makeClient(poolSize: 40, logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            try await Migrator.securePush(try Migration.bundled()).migrate(client: client, logger: logger)
            try await client.query(Self.emptyTables, logger: logger)
            return try await body(client)
        }
    }

    /// Runs a dispatcher wired exactly as `securepush serve --role dispatcher`, with `provider`.
    func withDispatcher<T: Sendable>(
        client: PostgresClient,
        provider: any PushProvider,
        configuration: DispatcherConfiguration,
        synchronousCommit: Bool,
        _ body: @Sendable (DispatcherAssembly) async throws -> T
    ) async throws -> T {
        // The dispatcher's own pool, as `securepush serve` has it, separate from the producers'.
        let dispatcherClient = url.makeClient(
            poolSize: DispatcherAssembly.databasePoolSize(configuration), logger: logger, synchronousCommit: synchronousCommit, busy: true)
        let dispatcherClientTask = Task { await dispatcherClient.run() }
        defer { dispatcherClientTask.cancel() }
        let assembly = try DispatcherAssembly(
            client: dispatcherClient,
            databaseURL: url,
            providers: [provider],
            configuration: configuration,
            logger: logger
        )
        let group = ServiceGroup(
            configuration: .init(
                services: assembly.services.map { .init(service: $0, serviceName: String(describing: type(of: $0))) }, logger: logger))
        let task = Task { try await group.run() }
        do {
            let result = try await body(assembly)
            await group.triggerGracefulShutdown()
            _ = try? await task.value
            return result
        } catch {
            task.cancel()
            throw error
        }
    }
}

struct DispatchOptions: ParsableArguments {
    @Option(help: "Deliveries claimed per statement.") var batchSize = 500
    @Option(help: "Pushes in flight per lane.") var concurrency = 256
    @Option(help: "Claim/send/complete loops.") var lanes = 2
    @Option(help: "Dispatcher commits wait for WAL flush: on or off (the default, as in serve).") var synchronousCommit = "off"
    @Option(help: "Badge source, as SECUREPUSH_BADGE: unread (the default, as in serve: the claim counts each recipient's unread) or off.")
    var badge = "unread"
    @Option(help: "As SECUREPUSH_REPLICATION_GATE: on sends a claimed batch only once a synchronous standby flushed past it.")
    var replicationGate = "off"

    func validate() throws {
        guard ["unread", "off"].contains(badge) else { throw ValidationError("--badge must be unread or off, got \"\(badge)\"") }
        guard ["on", "off"].contains(replicationGate) else { throw ValidationError("--replication-gate must be on or off") }
    }

    var configuration: DispatcherConfiguration {
        var configuration = DispatcherConfiguration()
        configuration.batchSize = batchSize
        configuration.concurrency = concurrency
        configuration.lanes = lanes
        configuration.unreadBadge = badge == "unread"
        configuration.replicationGate = replicationGate == "on"
        return configuration
    }
}
