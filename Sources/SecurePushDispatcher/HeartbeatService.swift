import Logging
import SecurePushCore
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
        try await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let (registry, identity, sent, failed) = (self.registry, self.identity, self.stats.sent, self.stats.failed)
                    try await withDeadline(self.interval * 4) { try await registry.heartbeat(identity, sent: sent, failed: failed) }
                } catch {
                    self.logger.warning("heartbeat failed", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: self.interval)
            }
        }
        let registry = self.registry
        let identity = self.identity
        let stats = self.stats
        // Not cancellable: record the stop even though the service group is shutting down.
        let timeout = interval * 4
        try? await Task { try await withDeadline(timeout) { try await registry.stopped(identity, sent: stats.sent, failed: stats.failed) } }.value
    }
}
