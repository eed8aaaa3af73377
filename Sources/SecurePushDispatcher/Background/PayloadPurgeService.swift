import Logging
import SecurePushCore
import ServiceLifecycle

/// Purges payloads of expired notifications, and of read ones after the configured time.
public struct PayloadPurgeService: Service {
    let payloads: any PayloadRetention
    let afterRead: Duration?
    let interval: Duration
    let timeout: Duration
    let logger: Logger

    /// Creates the service; each purge statement is bounded by `timeout`.
    public init(payloads: any PayloadRetention, afterRead: Duration?, interval: Duration, timeout: Duration, logger: Logger) {
        self.payloads = payloads
        self.afterRead = afterRead
        self.interval = interval
        self.timeout = timeout
        self.logger = logger
    }

    public func run() async throws {
        let (payloads, afterRead, timeout, logger) = (self.payloads, self.afterRead, self.timeout, self.logger)
        try await runPeriodically(every: interval, logger: logger, failure: "payload purge failed") { _ in
            let purged = try await withDeadline(timeout) { try await payloads.purgePayloads(afterRead: afterRead) }
            if purged > 0 { logger.info("purged payloads", metadata: ["notifications.purged": "\(purged)"]) }
        }
    }
}
