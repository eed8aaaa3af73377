import Logging
import SecurePushCore
import ServiceLifecycle

/// Makes scheduled deliveries claimable when their time comes (`deliver_at`, the end of a user's quiet
/// hours): every `scheduleInterval`, re-times the waiting deliveries of users whose quiet hours changed (a
/// few users a round: the API only records the change), then promotes due rows in batches until none is left,
/// and wakes this process's lanes (the database wakes the others). Every process runs it; concurrent
/// promoters skip each other's rows and users.
public struct ScheduleService: Service {
    /// Deliveries one statement promotes.
    public static let batchSize = 10_000
    /// Users whose quiet-hours change one round re-times.
    public static let rescheduledUsers = 5

    let maintenance: any QueueMaintenance
    let interval: Duration
    let timeout: Duration
    let signal: WakeSignal
    let logger: Logger

    /// Creates the service.
    public init(maintenance: any QueueMaintenance, configuration: DispatcherConfiguration, signal: WakeSignal, logger: Logger) {
        self.maintenance = maintenance
        self.interval = configuration.scheduleInterval
        self.timeout = configuration.databaseTimeout
        self.signal = signal
        self.logger = logger
    }

    public func run() async throws {
        try await runPeriodically(every: interval) { _ in
            // Each on its own: a re-timing that fails or outlasts the deadline must not hold back promotion.
            do {
                _ = try await self.reschedule()
            } catch {
                logger.databaseError("re-timing deliveries after a quiet-hours change failed", error)
            }
            do {
                _ = try await self.promoteDue()
            } catch {
                logger.databaseError("promoting scheduled deliveries failed", error)
            }
        }
    }

    /// Re-times the waiting deliveries of a few users whose quiet hours changed; returns how many moved.
    public func reschedule() async throws -> Int {
        let maintenance = self.maintenance
        let moved = try await withDeadline(timeout) { try await maintenance.reschedulePending(users: Self.rescheduledUsers) }
        if moved > 0 {
            signal.signal()
            logger.debug("waiting deliveries re-timed after a quiet-hours change", metadata: ["queue.rescheduled": "\(moved)"])
        }
        return moved
    }

    /// Promotes every due delivery; returns how many.
    public func promoteDue() async throws -> Int {
        var total = 0
        while !Task.isCancelled {
            let maintenance = self.maintenance
            let promoted = try await withDeadline(timeout) { try await maintenance.promoteDueDeliveries(batchSize: Self.batchSize) }
            total += promoted
            if promoted > 0 { signal.signal() }
            if promoted < Self.batchSize { break }
        }
        if total > 0 {
            logger.debug("scheduled deliveries became due", metadata: ["queue.promoted": "\(total)"])
        }
        return total
    }
}
