import ServiceLifecycle

/// The loop every periodic service shares (heartbeat, maintenance, payload purge): run `tick` with the
/// round number (0, 1, 2, ...), sleep `interval`, until graceful shutdown or cancellation. A tick in
/// progress at shutdown is cancelled. Returns when the loop has stopped, so the caller can record its stop.
public func runPeriodically(every interval: Duration, _ tick: @escaping @Sendable (_ round: Int) async -> Void) async throws {
    try await cancelWhenGracefulShutdown {
        var round = 0
        while !Task.isCancelled {
            await tick(round)
            round += 1
            try? await Task.sleep(for: interval)
        }
    }
}
