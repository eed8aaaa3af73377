import Foundation
import SecurePushCore
import SecurePushStore

/// `securepush probe`'s core: enqueue a probe notification to a user's devices and watch, until every
/// device has fetched it (or finished without being accepted) or the timeout passes, when each push was
/// accepted and fetched.
public struct Probe: Sendable {
    /// What a probe found.
    public struct Report: Sendable {
        /// The probe notification.
        public var notificationID: UUID
        /// Each device the probe was pushed to, as last seen.
        public var devices: [ProbeDeviceStatus]
        /// Whether every device settled before the timeout.
        public var settled: Bool

        /// Whether at least one platform accepted a push: the exit status of `securepush probe`.
        public var anyAccepted: Bool { devices.contains { $0.acceptedAfter != nil } }
    }

    let store: ProbeStore
    /// How long to wait; also the probe's TTL, so an undelivered probe does not linger.
    let timeout: Duration
    /// How often the progress is read.
    let pollInterval: Duration

    /// Creates a probe.
    public init(store: ProbeStore, timeout: Duration, pollInterval: Duration = .milliseconds(100)) {
        self.store = store
        self.timeout = timeout
        self.pollInterval = pollInterval
    }

    /// Runs the probe for `userID`; `started` is told the probe's id as soon as it is enqueued (so it can be
    /// fetched or looked up while the probe waits). A user without an active device gets a report without
    /// devices at once.
    public func run(userID: String, started: (UUID) -> Void = { _ in }) async throws -> Report {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        let id = try await store.enqueue(userID: userID, ttl: timeout)
        started(id)
        while true {
            // Fan-out happened with the insert: no row at the first look means no active device.
            let devices = try await store.status(of: id)
            if devices.allSatisfy(\.isSettled) {
                return Report(notificationID: id, devices: devices, settled: true)
            }
            guard clock.now < deadline else { return Report(notificationID: id, devices: devices, settled: false) }
            try await Task.sleep(until: min(clock.now + pollInterval, deadline), clock: clock)
        }
    }
}
