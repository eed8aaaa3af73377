import Logging
import NIOConcurrencyHelpers
import SecurePushCore
import ServiceLifecycle

/// Wakes the outcome feed's listeners (`LISTEN securepush_events`) within `interval` of an event: each
/// dispatcher process asks `securepush.announce_events` whether the feed's head moved, and it notifies once
/// if so. Several dispatchers may announce the same head; a listener reads after its own cursor, so it reads
/// each event once. No statement that writes an event carries a NOTIFY (whose commit lock would serialise
/// producers' commits).
public struct EventAnnouncer: Service {
    let store: any EventAnnouncements
    let interval: Duration
    let logger: Logger

    /// How soon after an event its listeners are woken, by default.
    public static let defaultInterval = Duration.milliseconds(200)

    /// Announces through `store` every `interval`.
    public init(store: any EventAnnouncements, interval: Duration = defaultInterval, logger: Logger) {
        self.store = store
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        let head = NIOLockedValueBox<String?>(nil)
        let store = self.store
        try await runPeriodically(every: interval, logger: logger, failure: "announcing outcome events failed") { _ in
            let last = head.withLockedValue { $0 }
            let now = try await store.announce(after: last)
            head.withLockedValue { $0 = now }
        }
    }
}
