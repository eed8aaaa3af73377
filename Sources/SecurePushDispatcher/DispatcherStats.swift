import Synchronization

/// Running counts of one process, for its heartbeat and for tests.
public final class DispatcherStats: Sendable {
    private let sentCount = Atomic<Int64>(0)
    private let failedCount = Atomic<Int64>(0)
    private let listenerConnections = Atomic<Int64>(0)

    /// Creates zeroed counters.
    public init() {}

    /// Pushes accepted by a platform.
    public var sent: Int64 { sentCount.load(ordering: .relaxed) }
    /// Deliveries that ended failed (including dead tokens).
    public var failed: Int64 { failedCount.load(ordering: .relaxed) }
    /// How many times the LISTEN connection has been (re)established.
    public var listenerConnectionCount: Int64 { listenerConnections.load(ordering: .relaxed) }

    func recordSent(_ count: Int) { sentCount.add(Int64(count), ordering: .relaxed) }
    func recordFailed(_ count: Int) { failedCount.add(Int64(count), ordering: .relaxed) }
    func recordListenerConnected() { listenerConnections.add(1, ordering: .relaxed) }
}
