import Foundation
import Logging
import SecurePushCore
import SecurePushDispatcher
import SecurePushProviders
import SecurePushServer
import ServiceLifecycle

/// Runs one in-process dispatcher (listener, heartbeat, maintenance, claim loops) against a test database,
/// exactly as `securepush serve --role dispatcher` wires it.
public final class DispatcherHarness: Sendable {
    /// The wired services.
    public let assembly: DispatcherAssembly
    /// What the simulated provider recorded.
    public let outbox: SimulatedOutbox
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    /// Starts a dispatcher. `behavior` scripts the simulated platform's answers.
    public init(
        database: TestDatabase,
        configuration: DispatcherConfiguration = .testing,
        behavior: SimulatedProvider.Behavior? = nil,
        extraProviders: [any PushProvider] = [],
        logs: CapturedLogs? = nil
    ) throws {
        let outbox = try SimulatedOutbox(path: nil, keepInMemory: true)
        var logger = logs?.logger(label: "securepush.test.dispatcher") ?? Logger(label: "securepush.test.dispatcher")
        if logs == nil { logger.logLevel = .warning }
        let assembly = try DispatcherAssembly(
            client: database.client,
            databaseURL: database.url,
            providers: [SimulatedProvider(outbox: outbox, behavior: behavior)] + extraProviders,
            configuration: configuration,
            logger: logger
        )
        let group = ServiceGroup(configuration: .init(services: assembly.services.map { .init(service: $0) }, logger: logger))
        self.assembly = assembly
        self.outbox = outbox
        self.group = group
        self.task = Task { try await group.run() }
    }

    /// Pushes recorded so far.
    public var pushes: [SimulatedPush] { outbox.pushes }

    /// Graceful shutdown (as SIGTERM), waiting until every service has stopped.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }

    /// Abrupt stop: cancels everything at once.
    public func kill() async {
        task.cancel()
        _ = try? await task.value
    }
}

extension DispatcherConfiguration {
    /// Fast settings for tests: short polls, leases and backoff.
    public static var testing: DispatcherConfiguration {
        var configuration = DispatcherConfiguration()
        configuration.pollInterval = .milliseconds(200)
        configuration.leaseDuration = .seconds(5)
        configuration.maintenanceInterval = .milliseconds(200)
        configuration.heartbeatInterval = .milliseconds(200)
        configuration.shutdownGracePeriod = .seconds(5)
        configuration.databaseTimeout = .seconds(5)
        configuration.retry = RetryPolicy(maxAttempts: 4, baseDelay: .milliseconds(20), maxDelay: .milliseconds(200), jitter: 0.1)
        return configuration
    }
}
