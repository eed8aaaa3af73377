import ArgumentParser
import Foundation
import PostgresNIO
import SecurePushCore
import SecurePushDispatcher
import SecurePushProviders
import SecurePushServer

/// Pre-inserts N notifications (one device each) and measures how fast one dispatcher process drains them.
struct DrainBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "drain", abstract: "Drain N pre-inserted notifications.")

    @Option(help: "Notifications to drain.") var count = 100_000
    @Option(help: "Also write every push to this simulated outbox file (default: none, measuring the pipeline only).")
    var outbox: String?
    @OptionGroup var dispatch: DispatchOptions

    func run() async throws {
        let database = try BenchDatabase()
        let count = self.count
        let outboxPath = self.outbox
        let configuration = dispatch.configuration
        let synchronousCommit = dispatch.synchronousCommit == "on"
        try await database.withClient { client in
            try await client.query(
                """
                INSERT INTO securepush.devices (user_id, platform, token)
                SELECT 'bench-' || g, 'simulated', 'bench-token-' || g FROM generate_series(1, 1000) g
                """,
                logger: database.logger
            )
            let clock = ContinuousClock()
            let enqueueStart = clock.now
            try await client.query(
                """
                INSERT INTO securepush.notifications (user_id, payload)
                SELECT 'bench-' || (g % 1000 + 1), jsonb_build_object('title', 'Payment received', 'n', g)
                FROM generate_series(1, \(count)) g
                """,
                logger: database.logger
            )
            let enqueueSeconds = (clock.now - enqueueStart).secondsDouble
            // Statistics, as a table in service has them (autovacuum analyzes after bulk changes): a table
            // bulk-loaded a moment ago has none, and the badge's unread count then gets a plan that scans
            // per user (the first drain of a run took 60 s instead of 13).
            try await client.query("ANALYZE securepush.notifications, securepush.deliveries", logger: database.logger)
            let provider = SimulatedProvider(outbox: try SimulatedOutbox(path: outboxPath))
            // The peak from here on is the dispatcher's: the enqueue above ran in the database.
            let peakReset = ProcessMemory.resetPeak()
            let drainSeconds = try await database.withDispatcher(
                client: client, provider: provider, configuration: configuration, synchronousCommit: synchronousCommit
            ) { assembly in
                let start = clock.now
                while assembly.stats.sent < Int64(count) {
                    try await Task.sleep(for: .milliseconds(5))
                }
                let elapsed = (clock.now - start).secondsDouble
                let left =
                    try await client.query("SELECT count(*)::bigint FROM securepush.deliveries", logger: database.logger)
                    .collect().first?.decode(Int64.self) ?? -1
                guard left == 0 else { throw ValidationError("\(left) deliveries left after draining") }
                return elapsed
            }
            print(
                String(
                    format: "drain count=%d enqueue_per_s=%.0f drain_s=%.3f deliveries_per_s=%.0f peak_rss_kb=%d",
                    count, Double(count) / enqueueSeconds, drainSeconds, Double(count) / drainSeconds, ProcessMemory.peakKB() ?? -1
                ) + " peak_since=\(peakReset ? "drain" : "start")"
            )
        }
    }
}
