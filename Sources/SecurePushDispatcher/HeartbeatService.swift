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
                    try await self.registry.heartbeat(self.identity, sent: self.stats.sent, failed: self.stats.failed)
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
        try? await Task { try await registry.stopped(identity, sent: stats.sent, failed: stats.failed) }.value
    }
}
