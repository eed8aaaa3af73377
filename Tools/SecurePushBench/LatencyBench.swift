import ArgumentParser
import Foundation
import NIOConcurrencyHelpers
import NIOPosix
import PostgresNIO
import SecurePushCore
import SecurePushProviders

#if canImport(Glibc)
    import Glibc
#endif

/// Commit-to-push latency with the producer in its own process: pgbench inserts single notifications
/// at a fixed rate (`-R`), each its own transaction, while this process runs a dispatcher whose
/// simulated provider notes the wall-clock time of every push. A notification's commit time is
/// PostgreSQL's own record of it (`pg_xact_commit_timestamp(xmin)`, needs `track_commit_timestamp = on`).
struct LatencyBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "latency", abstract: "Commit-to-push latency with pgbench inserting at a fixed rate.")

    @Option(help: "Offered inserts per second (pgbench -R); 0: as fast as the producers can commit.") var rate = 1000
    @Option(help: "Seconds to offer load (pgbench -T).") var seconds = 10
    @Option(help: "pgbench clients (connections) inserting.") var producerClients = 8
    @Option(help: "The pgbench binary.") var pgbench = "pgbench"
    @OptionGroup var dispatch: DispatchOptions

    func run() async throws {
        let database = try BenchDatabase()
        let (rate, seconds, clients, pgbench) = (self.rate, self.seconds, self.producerClients, self.pgbench)
        let configuration = dispatch.configuration
        let synchronousCommit = dispatch.synchronousCommit == "on"
        let pushedAt = PushTimes()
        let provider = SimulatedProvider(outbox: try SimulatedOutbox(path: nil)) { push in
            pushedAt.record(push.notificationID.uuid)
            return .sent(messageID: nil)
        }
        try await database.withClient { client in
            let tracking = try await client.query("SHOW track_commit_timestamp", logger: database.logger).collect().first?.decode(String.self)
            guard tracking == "on" else {
                throw ValidationError("the latency bench needs track_commit_timestamp = on in PostgreSQL (ops/bench starts its cluster so)")
            }
            try await client.query(
                """
                INSERT INTO securepush.devices (user_id, platform, token)
                SELECT 'lat-' || g, 'simulated', 'lat-token-' || g FROM generate_series(1, 100) g
                """,
                logger: database.logger
            )
            try await database.withDispatcher(client: client, provider: provider, configuration: configuration, synchronousCommit: synchronousCommit)
            { _ in
                let producer = try await Producer(pgbench: pgbench, url: database.rawURL, rate: rate, seconds: seconds, clients: clients).run()
                let inserted =
                    try await client.query("SELECT count(*)::bigint FROM securepush.notifications", logger: database.logger)
                    .collect().first?.decode(Int64.self) ?? 0
                let clock = ContinuousClock()
                let deadline = clock.now + .seconds(30)
                while pushedAt.count < inserted, clock.now < deadline {
                    try await Task.sleep(for: .milliseconds(10))
                }
                // Each notification's commit, and the start of the claim that fanned it out (its delivery's
                // created_at: the claim transaction's now()), so that the figure splits into the pick-up
                // (commit to claim) and the claim and send (claim to push).
                var committed: [UUID: (commit: Int64, claim: Int64?)] = [:]
                let rows = try await client.query(
                    """
                    SELECT n.id, (extract(epoch FROM pg_xact_commit_timestamp(n.xmin)) * 1000000)::bigint,
                           (SELECT (extract(epoch FROM min(l.created_at)) * 1000000)::bigint
                            FROM securepush.delivery_log l WHERE l.notification_id = n.id)
                    FROM securepush.notifications n
                    """,
                    logger: database.logger)
                for try await (id, micros, claim) in rows.decode((UUID, Int64?, Int64?).self) {
                    if let micros { committed[id] = (micros, claim) }
                }
                let pushes = pushedAt.all
                var latencies: [Double] = []
                var pickups: [Double] = []
                var claimToPush: [Double] = []
                latencies.reserveCapacity(committed.count)
                for (id, times) in committed {
                    guard let pushed = pushes[id] else { continue }
                    latencies.append(Double(pushed - times.commit) / 1000)
                    if let claim = times.claim {
                        pickups.append(Double(claim - times.commit) / 1000)
                        claimToPush.append(Double(pushed - claim) / 1000)
                    }
                }
                let percentile = Percentiles(latencies)
                let pickup = Percentiles(pickups)
                let send = Percentiles(claimToPush)
                print(
                    String(
                        format:
                            "latency offered_per_s=%d achieved_per_s=%.0f inserted=%d producer_s=%.2f pushed=%d schedule_lag_ms=%.2f p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f max_ms=%.2f pickup_p50_ms=%.2f pickup_p90_ms=%.2f claim_to_push_p50_ms=%.2f claim_to_push_p90_ms=%.2f",
                        rate, producer.transactionsPerSecond ?? Double(inserted) / producer.seconds, inserted, producer.seconds, latencies.count,
                        producer.scheduleLagMilliseconds ?? -1,
                        percentile(0.5), percentile(0.9), percentile(0.99), percentile(1),
                        pickup(0.5), pickup(0.9), send(0.5), send(0.9)
                    )
                )
            }
        }
    }
}

/// pgbench as the producer, in its own process.
struct Producer {
    var pgbench: String
    var url: String
    var rate: Int
    var seconds: Int
    var clients: Int

    struct Result {
        /// pgbench's "rate limit schedule lag" average: how far behind the offered schedule it ran.
        var scheduleLagMilliseconds: Double?
        /// pgbench's own rate (transactions per second without connection time).
        var transactionsPerSecond: Double?
        /// How long pgbench ran.
        var seconds: Double
    }

    func run() async throws -> Result {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("securepush-produce-\(getpid()).sql")
        try """
        \\set u random(1, 100)
        INSERT INTO securepush.notifications (user_id, payload) VALUES ('lat-' || :u, '{"title":"Payment received","amount":"12.00"}');

        """.write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }
        // A producer that falls more than a second behind the schedule skips those inserts (pgbench
        // counts them) instead of running on past the duration to catch up.
        let pace = rate > 0 ? ["-R", String(rate), "--latency-limit", "1000"] : []
        let arguments =
            ["-n", "-f", script.path, "-T", String(seconds)] + pace + ["-c", String(clients), "-j", String(min(clients, 2)), url]
        let clock = ContinuousClock()
        let start = clock.now
        // pgbench runs for the whole measurement and waiting for it blocks a thread: NIO's thread pool has
        // threads for that; a detached task would take one of Swift's cooperative threads (one core's worth
        // of them here) from the dispatcher being measured.
        let output = try await NIOThreadPool.singleton.runIfActive { try Self.execute(pgbench, arguments) }
        let elapsed = clock.now - start
        let lines = output.split(separator: "\n")
        let lag = lines.first { $0.hasPrefix("rate limit schedule lag:") }
            .flatMap { line in line.split(separator: " ").dropFirst(5).first.flatMap { Double($0) } }
        let tps = lines.first { $0.hasPrefix("tps = ") }.flatMap { line in line.split(separator: " ").dropFirst(2).first.flatMap { Double($0) } }
        return Result(
            scheduleLagMilliseconds: lag, transactionsPerSecond: tps,
            seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    private static func execute(_ executable: String, _ arguments: [String]) throws -> String {
        do {
            return try CleanSpawn.run(executable, arguments)
        } catch let failure as CleanSpawn.Failure {
            throw ValidationError("pgbench: \(failure.description)")
        }
    }
}

/// Wall-clock push times (microseconds since 1970) keyed by notification id.
final class PushTimes: Sendable {
    private let times = NIOLockedValueBox<[UUID: Int64]>([:])

    func record(_ id: UUID) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let micros = Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
        times.withLockedValue { $0[id] = micros }
    }

    var count: Int { times.withLockedValue { $0.count } }
    var all: [UUID: Int64] { times.withLockedValue { $0 } }
}
