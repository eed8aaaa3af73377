import ArgumentParser
import Foundation
import PostgresNIO
import SecurePushCore
import SecurePushProviders
import Synchronization

/// Offers single-row enqueues at a fixed rate and measures commit-to-push latency.
struct LatencyBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "latency", abstract: "Enqueue-commit-to-push latency at a fixed rate.")

    @Option(help: "Offered enqueues per second.") var rate = 1000
    @Option(help: "Seconds to offer load.") var seconds = 10
    @OptionGroup var dispatch: DispatchOptions

    func run() async throws {
        let database = try BenchDatabase()
        let rate = self.rate
        let total = rate * seconds
        let configuration = dispatch.configuration
        let synchronousCommit = dispatch.synchronousCommit == "on"
        let pushedAt = InstantLog()
        let committedAt = InstantLog()
        let clock = ContinuousClock()
        let provider = SimulatedProvider(outbox: try SimulatedOutbox(path: nil)) { push in
            let now = clock.now
            pushedAt.record(push.notificationID.uuid, now)
            return .sent(messageID: nil)
        }
        try await database.withClient { client in
            try await client.query(
                """
                INSERT INTO securepush.devices (user_id, platform, token)
                SELECT 'lat-' || g, 'simulated', 'lat-token-' || g FROM generate_series(1, 100) g
                """,
                logger: database.logger
            )
            try await database.withDispatcher(client: client, provider: provider, configuration: configuration, synchronousCommit: synchronousCommit)
            { _ in
                try await Task.sleep(for: .milliseconds(500))  // listener connected, lanes idle
                let start = clock.now
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<total {
                        let due = start + .nanoseconds(Int64(index) * 1_000_000_000 / Int64(rate))
                        try await Task.sleep(until: due, clock: clock)
                        group.addTask {
                            let id = try await client.query(
                                "INSERT INTO securepush.notifications (user_id, payload) VALUES (\("lat-\(index % 100 + 1)"), '{\"m\":1}') RETURNING id",
                                logger: database.logger
                            ).collect().first!.decode(UUID.self)
                            let now = clock.now
                            committedAt.record(id, now)
                        }
                    }
                    try await group.waitForAll()
                }
                let offeredSeconds = (clock.now - start).secondsDouble
                let deadline = clock.now + .seconds(30)
                while pushedAt.count < total, clock.now < deadline {
                    try await Task.sleep(for: .milliseconds(10))
                }
                var latencies: [Double] = []
                let pushes = pushedAt.all
                for (id, committed) in committedAt.all {
                    if let pushed = pushes[id] {
                        latencies.append(max(0, (pushed - committed).secondsDouble * 1000))
                    }
                }
                latencies.sort()
                func percentile(_ p: Double) -> Double {
                    latencies.isEmpty ? .nan : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
                }
                print(
                    String(
                        format: "latency offered_per_s=%.0f pushed=%d/%d p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f max_ms=%.2f",
                        Double(total) / offeredSeconds, latencies.count, total, percentile(0.5), percentile(0.9), percentile(0.99),
                        latencies.last ?? .nan
                    )
                )
            }
        }
    }
}

/// Instants keyed by notification id, shared between the producer and the provider.
final class InstantLog: Sendable {
    private let instants = Mutex<[UUID: ContinuousClock.Instant]>([:])

    func record(_ id: UUID, _ instant: ContinuousClock.Instant) {
        instants.withLock { $0[id] = instant }
    }

    var count: Int { instants.withLock { $0.count } }
    var all: [UUID: ContinuousClock.Instant] { instants.withLock { $0 } }
}
