import Logging
import SecurePushCore
import SecurePushStore
import ServiceLifecycle

/// Writes this process's heartbeat row until shutdown, then marks it stopped.
public struct HeartbeatService: Service {
    let registry: any DispatcherRegistry
    let identity: DispatcherIdentity
    let stats: DispatcherStats
    let interval: Duration
    let logger: Logger

    /// Creates the service.
    public init(registry: any DispatcherRegistry, identity: DispatcherIdentity, stats: DispatcherStats, interval: Duration, logger: Logger) {
        self.registry = registry
        self.identity = identity
        self.stats = stats
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        let (registry, identity, stats, timeout, logger) = (self.registry, self.identity, self.stats, interval * 4, self.logger)
        try await runPeriodically(every: interval) { _ in
            do {
                try await withDeadline(timeout) { try await registry.heartbeat(identity, sent: stats.sent, failed: stats.failed) }
            } catch {
                logger.databaseError("heartbeat failed", error)
            }
        }
        // Graceful shutdown stopped the loop, not this task: the stop is still recorded.
        do {
            try await withDeadline(timeout) { try await registry.stopped(identity, sent: stats.sent, failed: stats.failed) }
        } catch {
            logger.databaseError("recording the dispatcher's stop failed", error)
        }
    }
}
