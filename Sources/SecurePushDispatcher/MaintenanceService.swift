import Logging
import NIOConcurrencyHelpers
import SecurePushCore
import ServiceLifecycle

/// Periodically rescues expired leases, sweeps expired deliveries, folds the unread-badge rows and prunes
/// old history. Every process runs it; its statements are safe to run concurrently.
public struct MaintenanceService: Service {
    /// Users whose badge rows one round folds.
    public static let badgeUsersPerRound = 2_000

    let maintenance: any QueueMaintenance
    let configuration: DispatcherConfiguration
    let signal: WakeSignal
    let logger: Logger
    private let badgeCursor = BadgeCursor()

    /// Creates the service.
    public init(maintenance: any QueueMaintenance, configuration: DispatcherConfiguration, signal: WakeSignal, logger: Logger) {
        self.maintenance = maintenance
        self.configuration = configuration
        self.signal = signal
        self.logger = logger
    }

    public func run() async throws {
        try await runPeriodically(every: configuration.maintenanceInterval) { round in
            // Pruning is heavier: every twelfth round.
            await self.runOnce(prune: round % 12 == 0)
        }
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
