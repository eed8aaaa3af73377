import Logging
import SecurePushCore
import SecurePushStore
import ServiceLifecycle

/// Purges payloads of expired notifications, and of read ones after the configured time.
public struct PayloadPurgeService: Service {
    let notifications: NotificationStore
    let afterRead: Duration?
    let interval: Duration
    let timeout: Duration
    let logger: Logger

    /// Creates the service; each purge statement is bounded by `timeout`.
    public init(notifications: NotificationStore, afterRead: Duration?, interval: Duration, timeout: Duration, logger: Logger) {
        self.notifications = notifications
        self.afterRead = afterRead
        self.interval = interval
        self.timeout = timeout
        self.logger = logger
    }

    public func run() async throws {
        let (notifications, afterRead, timeout, logger) = (self.notifications, self.afterRead, self.timeout, self.logger)
        try await runPeriodically(every: interval, logger: logger, failure: "payload purge failed") { _ in
            let purged = try await withDeadline(timeout) { try await notifications.purgePayloads(afterRead: afterRead) }
            if purged > 0 { logger.info("purged payloads", metadata: ["notifications.purged": "\(purged)"]) }
        }
    }
}
