import Foundation
import Logging
import NIOConcurrencyHelpers
import SecurePushCore
import ServiceLifecycle

/// Pushes of installations without quotas, counted in memory and added to the database every second
/// (`securepush_relay.add_usage`): one statement a second instead of a usage row write per request. A crash
/// forgets at most the last second's counts (counts only: quotas are counted in the database, exactly).
public final class RelayUsage: Service, Sendable {
    let store: RelayStore
    let interval: Duration
    let logger: Logger
    private let counts = NIOLockedValueBox<[UUID: Int]>([:])

    /// Counts flushed to `store` every `interval`.
    public init(store: RelayStore, interval: Duration = .seconds(1), logger: Logger) {
        self.store = store
        self.interval = interval
        self.logger = logger
    }

    /// Counts `pushes` for `installation`.
    func add(_ installation: UUID, _ pushes: Int) {
        guard pushes > 0 else { return }
        counts.withLockedValue { $0[installation, default: 0] += pushes }
    }

    /// Adds what was counted to the database; on failure the counts are kept for the next time.
    func flush() async {
        let taken = counts.withLockedValue { counts -> [UUID: Int] in
            defer { counts = [:] }
            return counts
        }
        guard !taken.isEmpty else { return }
        do {
            try await store.addUsage(taken)
        } catch {
            counts.withLockedValue { counts in counts.merge(taken, uniquingKeysWith: +) }
            logger.databaseError("relay usage not written, kept for the next flush", error)
        }
    }

    public func run() async throws {
        try await runPeriodically(every: interval) { _ in await self.flush() }
        await flush()
    }
}
