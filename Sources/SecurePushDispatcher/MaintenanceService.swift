import Logging
import NIOConcurrencyHelpers
import SecurePushCore
import ServiceLifecycle

/// Periodically rescues expired leases, sweeps expired deliveries, folds every user's unread-badge rows (2,000
/// users a round, in user order) and prunes old history; in a loop of its own, every `badgeFoldInterval`, folds
/// the badge rows of the users this process pushed to since (`BadgeRecipients`: a claim walks a recipient's rows
/// written since their last fold). Every process runs it; its statements are safe to run concurrently.
public struct MaintenanceService: Service {
    /// Users whose badge rows one statement folds.
    public static let badgeUsersPerRound = 2_000

    let maintenance: any QueueMaintenance
    let configuration: DispatcherConfiguration
    let signal: WakeSignal
    let recipients: BadgeRecipients
    let logger: Logger
    private let badgeCursor = BadgeCursor()

    /// Creates the service; `recipients` are the dispatcher's (`Dispatcher.badgeRecipients`).
    public init(
        maintenance: any QueueMaintenance, configuration: DispatcherConfiguration, signal: WakeSignal,
        recipients: BadgeRecipients = BadgeRecipients(), logger: Logger
    ) {
        self.maintenance = maintenance
        self.configuration = configuration
        self.signal = signal
        self.recipients = recipients
        self.logger = logger
    }

    public func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask {
                try await runPeriodically(every: configuration.maintenanceInterval) { round in
                    // Pruning is heavier: every twelfth round.
                    await self.runOnce(prune: round % 12 == 0)
                }
            }
            group.addTask {
                try await runPeriodically(every: configuration.badgeFoldInterval, logger: logger, failure: "folding badge rows failed") { _ in
                    try await self.foldBadges()
                }
            }
        }
    }

    /// Folds the badge rows of the users pushed to since the last call, `badgeUsersPerRound` a statement;
    /// returns how many users had rows to fold. When a statement fails, its users and the rest wait for the next call.
    @discardableResult
    public func foldBadges() async throws -> Int {
        let maintenance = self.maintenance
        var folded = 0
        let users = recipients.take()
        for start in stride(from: 0, to: users.count, by: Self.badgeUsersPerRound) {
            let chunk = Array(users[start..<min(start + Self.badgeUsersPerRound, users.count)])
            do {
                folded += try await withDeadline(configuration.databaseTimeout) { try await maintenance.foldBadges(users: chunk) }
            } catch {
                recipients.restore(users[start...])
                throw error
            }
        }
        return folded
    }

    /// One round: rescue, expire and (when asked) prune.
    public func runOnce(prune: Bool) async {
        let maintenance = self.maintenance
        let timeout = configuration.databaseTimeout
        let retention = configuration.retention
        do {
            let rescued = try await withDeadline(timeout) { try await maintenance.rescueExpiredLeases() }
            if rescued > 0 {
                logger.notice("rescued deliveries with expired leases", metadata: ["queue.rescued": "\(rescued)"])
                signal.signal()
            }
            let expired = try await withDeadline(timeout) { try await maintenance.expirePending() }
            if expired > 0 {
                logger.info("expired pending deliveries", metadata: ["queue.expired": "\(expired)"])
            }
            // Every user in turn (the rows of reads, of other processes' recipients, steps that came due).
            let after = badgeCursor.user.withLockedValue { $0 }
            let last = try await withDeadline(timeout) {
                try await maintenance.compactBadges(after: after, users: Self.badgeUsersPerRound)
            }
            badgeCursor.user.withLockedValue { $0 = last }
            if prune {
                let staleAfter = configuration.deviceStaleAfter
                let retired = try await withDeadline(timeout) { try await maintenance.retireStaleDevices(staleAfter: staleAfter) }
                if retired > 0 {
                    logger.notice("retired devices not seen lately", metadata: ["devices.retired": "\(retired)"])
                }
                let deviceRetention = configuration.deviceRetention
                let deleted = try await withDeadline(timeout) { try await maintenance.deleteRetiredDevices(retention: deviceRetention) }
                if deleted > 0 {
                    logger.info("deleted devices inactive past their retention", metadata: ["devices.deleted": "\(deleted)"])
                }
                let auditRetention = configuration.auditRetention
                let audit = try await withDeadline(timeout) { try await maintenance.pruneAuditLog(retention: auditRetention) }
                let pruned = try await withDeadline(timeout) { try await maintenance.prune(retention: retention, batchSize: 10_000) } + audit
                if pruned > 0 {
                    logger.info("pruned old rows", metadata: ["queue.pruned": "\(pruned)"])
                }
            }
        } catch {
            logger.databaseError("maintenance failed", error)
        }
    }
}

/// Where the next round's badge compaction starts (the user ids are not logged: they are the producers').
private final class BadgeCursor: Sendable {
    let user = NIOLockedValueBox<String?>(nil)
}
