import Logging
import SecurePushCore
import ServiceLifecycle

/// Makes scheduled deliveries claimable when their time comes (`deliver_at`, the end of a user's quiet
/// hours): every `scheduleInterval`, promotes due rows in batches until none is left and wakes this process's
/// lanes (the database wakes the others); in a loop of its own, so that nothing a user does delays it,
/// re-times the waiting deliveries of users whose quiet hours changed (the API only records the change; a round
/// walks a bounded part of a few users' queues). Every process runs it; concurrent promoters skip each other's
/// rows and users.
public struct ScheduleService: Service {
    /// Deliveries one statement promotes.
    public static let batchSize = 10_000
    /// Users whose quiet-hours change one re-timing statement takes.
    public static let rescheduledUsers = 5
    /// Notifications one re-timing statement walks, over all its users (a few thousand deliveries written at most).
    public static let rescheduledNotifications = 2_000

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
        // Two loops: re-timing many users' large queues (issue 47: up to 8.1 s of everyone's scheduled pushes
        // when it ran before promotion in one loop) never holds back promotion.
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask {
                try await runPeriodically(every: interval, logger: logger, failure: "re-timing deliveries after a quiet-hours change failed") { _ in
                    _ = try await self.reschedule()
                }
            }
            group.addTask {
                try await runPeriodically(every: interval, logger: logger, failure: "promoting scheduled deliveries failed") { _ in
                    _ = try await self.promoteDue()
                }
            }
        }
    }

    /// Re-times the waiting deliveries of users whose quiet hours changed, in bounded statements (a few users,
    /// a few thousand notifications each) until none finds more to do; returns how many moved.
    public func reschedule() async throws -> Int {
        var moved = 0
        while !Task.isCancelled {
            let maintenance = self.maintenance
            let round = try await withDeadline(timeout) {
                try await maintenance.rescheduleRound(users: Self.rescheduledUsers, notifications: Self.rescheduledNotifications)
            }
            moved += round.moved
            if round.moved > 0 { signal.signal() }
            if !round.more { break }
        }
        if moved > 0 {
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
