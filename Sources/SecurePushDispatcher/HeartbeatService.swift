import Logging
import SecurePushCore
import ServiceLifecycle

/// Writes this process's heartbeat row (counts and circuit breakers that are not closed) until shutdown,
/// then marks it stopped.
public struct HeartbeatService: Service {
    let registry: any DispatcherRegistry
    let identity: DispatcherIdentity
    let stats: DispatcherStats
    let interval: Duration
    let circuits: @Sendable () -> [CircuitSnapshot]
    /// The dispatcher's pacer, whose share follows the count of live dispatchers.
    let pacer: PushPacer?
    let logger: Logger

    /// Creates the service; `circuits` gives the breakers to record (the dispatcher's `breakers.snapshots()`).
    public init(
        registry: any DispatcherRegistry, identity: DispatcherIdentity, stats: DispatcherStats, interval: Duration,
        circuits: @escaping @Sendable () -> [CircuitSnapshot] = { [] }, pacer: PushPacer? = nil, logger: Logger
    ) {
        self.registry = registry
        self.identity = identity
        self.stats = stats
        self.interval = interval
        self.circuits = circuits
        self.pacer = pacer
        self.logger = logger
    }

    public func run() async throws {
        let (registry, identity, stats, timeout, logger) = (self.registry, self.identity, self.stats, interval * 4, self.logger)
        let (circuits, pacer, liveWithin) = (self.circuits, self.pacer, interval * 3)
        try await runPeriodically(every: interval, logger: logger, failure: "heartbeat failed") { _ in
            let open = circuits()
            try await withDeadline(timeout) {
                try await registry.heartbeat(identity, sent: stats.sent, failed: stats.failed, circuits: open, listener: stats.listener)
            }
            if let pacer {
                let live = try await withDeadline(timeout) { try await registry.liveDispatchers(within: liveWithin) }
                if pacer.share(among: live) {
                    logger.info(
                        "push rate shared among the live dispatchers",
                        metadata: ["dispatcher.live": "\(pacer.processes)", "dispatcher.push_rate": "\(Int(pacer.rate.rounded()))"])
                }
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
