import Logging
import SecurePushCore
import ServiceLifecycle

/// Deletes the relay's expired request ids and old usage counters every minute.
public struct RelayPruneService: Service {
    let store: RelayStore
    let logger: Logger

    /// Creates the service.
    public init(store: RelayStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    public func run() async throws {
        let (store, logger) = (self.store, self.logger)
        try await runPeriodically(every: .seconds(60), logger: logger, failure: "relay prune failed") { _ in
            _ = try await withDeadline(.seconds(30)) { try await store.prune() }
        }
    }
}
