import Logging
import ServiceLifecycle

/// The loop every periodic service shares (heartbeat, maintenance, payload purge, fetch statistics): run
/// `tick` with the round number (0, 1, 2, ...), sleep `interval`, until graceful shutdown or cancellation.
/// A tick in progress at shutdown is cancelled. Returns when the loop has stopped, so the caller can record its stop.
public func runPeriodically(every interval: Duration, _ tick: @escaping @Sendable (_ round: Int) async -> Void) async throws {
    await cancelWhenGracefulShutdown {
        var round = 0
        while !Task.isCancelled {
            await tick(round)
            round += 1
            try? await Task.sleep(for: interval)
        }
    }
}

/// `runPeriodically` for ticks that can fail: a failed round is logged with `logger.databaseError(failure, error)`
/// (what `DatabaseErrorSummary` allows, nothing more) and the loop goes on with the next round.
public func runPeriodically(
    every interval: Duration, logger: Logger, failure: String, file: String = #fileID, line: UInt = #line,
    _ tick: @escaping @Sendable (_ round: Int) async throws -> Void
) async throws {
    try await runPeriodically(every: interval) { round in
        do {
            try await tick(round)
        } catch {
            logger.databaseError("\(failure)", error, file: file, line: line)
        }
    }
}
