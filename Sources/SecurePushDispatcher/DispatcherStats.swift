import Foundation
import Metrics
import NIOConcurrencyHelpers
import SecurePushCore
import Synchronization

/// Running counts of one process, for its heartbeat and for tests.
public final class DispatcherStats: Sendable {
    private let sentCount = Atomic<Int64>(0)
    private let failedCount = Atomic<Int64>(0)
    private let listenerConnections = Atomic<Int64>(0)
    private let listenerHeard = NIOLockedValueBox<Date?>(nil)
    private let listenerIsUp = Atomic<Bool>(false)
    private let listenerUp = Gauge(label: "securepush_listener_connected")
    private let listenerHeardGauge = Gauge(label: "securepush_listener_last_heard_timestamp_seconds")

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
    /// When the LISTEN connection last heard from the database (a notification or a liveness probe).
    public var listenerLastHeard: Date? { listenerHeard.withLockedValue { $0 } }
    /// The LISTEN connection's state, for the heartbeat.
    public var listener: ListenerStatus { ListenerStatus(connected: listenerIsUp.load(ordering: .relaxed), lastHeard: listenerLastHeard) }

    func recordListenerConnected() {
        listenerConnections.add(1, ordering: .relaxed)
        listenerIsUp.store(true, ordering: .relaxed)
        listenerUp.record(1)
        recordListenerHeard()
    }

    func recordListenerLost() {
        listenerIsUp.store(false, ordering: .relaxed)
        listenerUp.record(0)
    }

    func recordListenerHeard() {
        let now = Date()
        listenerHeard.withLockedValue { $0 = now }
        listenerHeardGauge.record(now.timeIntervalSince1970)
    }
}
