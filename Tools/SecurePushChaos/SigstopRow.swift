import Foundation
import PostgresNIO

/// Row 1: a dispatcher (`p2`) stopped with SIGSTOP while it holds a claimed batch, for longer than its
/// lease, then resumed. The other process rescues and sends the batch. Measured: the stopped process's
/// sends after SIGCONT of deliveries it no longer held (none may start: only the few pushes already under
/// way when it was stopped may reach the wire late), and its outcome writes fenced off by the lease token. Devices are APNs and Web Push, whose requests name the sending process.
enum SigstopRow {
    static let lease = 2.0
    /// Lanes × pushes in flight per lane: the most pushes p2 can have under way when it is stopped. Their
    /// requests may reach the wire only after SIGCONT (they were started, not started late).
    static let inFlightAtStop = 2 * 2

    static func plan(_ options: ChaosOptions) -> RowPlan {
        let marks = Marks()
        return RowPlan(
            platforms: [.apns, .webpush],
            environment: [
                "SECUREPUSH_LEASE": "\(Int(lease))s", "SECUREPUSH_MAINTENANCE_INTERVAL": "250ms",
                // Slow enough sending that a claimed batch is still being sent when the process is stopped.
                "SECUREPUSH_LANES": "2", "SECUREPUSH_CONCURRENCY": "2", "SECUREPUSH_BATCH_SIZE": "50",
            ],
            disrupt: { try await disrupt($0, marks: marks) },
            verify: { verify($0, $1, marks: marks) }
        )
    }

    /// The deliveries `dispatcher` holds claimed: delivery rows and items of its leases (migration 046).
    private static func heldQuery(_ dispatcher: UUID) -> PostgresQuery {
        """
        SELECT (SELECT count(*) FROM securepush.deliveries WHERE state = 'claimed' AND claimed_by = \(dispatcher))
               + (SELECT count(*) FROM securepush.claimed_items WHERE worker = \(dispatcher))
        """
    }

    private static func disrupt(_ context: ChaosContext, marks: Marks) async throws {
        let (database, victim, report) = (context.database, context.processes[1], context.report)
        let dispatcherID = try await database.scalar(
            "SELECT id FROM securepush.dispatchers WHERE pid = \(victim.pid) AND stopped_at IS NULL ORDER BY started_at DESC LIMIT 1", as: UUID.self)
        // A burst on top of the steady load, so both dispatchers hold batches they are still sending.
        try await context.producer.burst(300)
        let held = try await database.with { connection in
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                let rows = try await connection.query(
                    heldQuery(dispatcherID), logger: database.logger)
                let count = try await rows.collect().first?.decode(Int64.self) ?? 0
                if count >= 10 {
                    victim.signal(SIGSTOP)
                    return count
                }
            }
            return 0
        }
        marks.set("stop")
        report.figure("claims held at SIGSTOP", "\(held)")
        report.check("p2 stopped while holding claims", held > 0)
        guard held > 0 else { return }
        try await context.hold(.seconds(lease + 3))
        let stillHeld = try await database.scalar(
            heldQuery(dispatcherID), as: Int64.self)
        report.check("p2's claims rescued while it was stopped", stillHeld == 0)
        victim.signal(SIGCONT)
        marks.set("cont")
        if let stop = marks.get("stop") {
            report.figure("stopped", seconds(Date().timeIntervalSince(stop)) + " (lease \(Int(lease)) s)")
        }
    }

    private static func verify(_ context: ChaosContext, _ attempts: [PushAttempt], marks: Marks) {
        let report = context.report
        guard let resumed = marks.get("cont") else { return }
        var accepted: [LossReport.Pair: Int] = [:]
        for attempt in attempts where attempt.accepted {
            guard let notification = attempt.notification else { continue }
            accepted[LossReport.Pair(notification: notification, platform: attempt.platform, deviceKey: attempt.deviceKey), default: 0] += 1
        }
        let afterResume = attempts.filter { $0.sender == 1 && $0.receivedAt > resumed }
        // A push p2 sent after SIGCONT that was also accepted another time: a send of a delivery whose lease
        // p2 had lost (every lease it held expired and was rescued while it was stopped).
        let late = afterResume.filter { attempt in
            guard let notification = attempt.notification else { return false }
            return accepted[LossReport.Pair(notification: notification, platform: attempt.platform, deviceKey: attempt.deviceKey), default: 0] > 1
        }
        let unattributed = attempts.filter { $0.sender == nil }.count
        report.figure("p2 pushes after SIGCONT", "\(afterResume.count)")
        report.figure("late sends from lost leases", "\(late.count) (at most \(inFlightAtStop) may have been under way at SIGSTOP)")
        report.check("p2 started no push from a lease it had lost", late.count <= inFlightAtStop)
        report.check("every push names its sender", unattributed == 0)
        let fenced = context.logLines(context.processes[1], containing: "dispatcher.lost=").compactMap { line -> Int? in
            guard let range = line.range(of: "dispatcher.lost=") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        report.figure("p2 outcome writes fenced", "\(fenced.reduce(0, +))")
    }
}
