import Foundation

/// Row 3: other clients take every connection slot (`max_connections`, small in the chaos cluster) for a
/// few seconds, after ending SecurePush's sessions. The API must answer 503 within its deadline, the
/// dispatchers back off and resume, nothing is lost. The producer keeps its own session (an application
/// holding its connection) and goes on inserting.
enum ConnectionExhaustionRow {
    static func plan(_ options: ChaosOptions) -> RowPlan {
        let marks = Marks()
        return RowPlan(
            tail: .seconds(3),
            disrupt: { context in
                let report = context.report
                let window = context.options.outageSeconds
                let (ready, read) = try await context.probingAPI { ready, read in
                    try await context.hold(.seconds(1))
                    let spared = context.producer.pid.map { [$0] } ?? []
                    marks.set("exhausted")
                    let outcome = try await ConnectionHog(database: context.database).exhaust(for: .seconds(window), spared: spared)
                    marks.set("released")
                    report.figure("slots taken", "\(outcome.held), SecurePush sessions ended \(outcome.sessionsEnded)")
                    if let recovery = await context.waitReady() {
                        report.figure("ready again", seconds(recovery) + " after release")
                    } else {
                        report.check("ready again after release", false)
                    }
                    try await context.hold(.seconds(1))
                    return (ready, read)
                }
                guard let exhausted = marks.get("exhausted"), let released = marks.get("released") else { return }
                // The first half second is the hog filling the slots and ending sessions.
                let start = exhausted.addingTimeInterval(0.5)
                PostgresRestartRow.examine(
                    ready, from: start, until: released, phase: "the slots are taken", unavailable: .sometimes, report: report)
                PostgresRestartRow.examine(
                    read, from: start, until: released, phase: "the slots are taken", unavailable: .notRequired, report: report)
                let backoffs = context.processes.map { context.logLines($0, containing: "claim failed").count }.reduce(0, +)
                report.figure("dispatcher claim failures (backing off)", "\(backoffs)")
            },
            verify: { context, attempts in
                guard let released = marks.get("released") else { return }
                let resumed = attempts.filter { $0.accepted && $0.receivedAt > released }.map(\.receivedAt).min()
                context.report.figure("first push after release", resumed.map { seconds($0.timeIntervalSince(released)) } ?? "none")
                context.report.check("dispatchers resumed", resumed != nil)
            }
        )
    }
}
