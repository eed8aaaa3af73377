import Foundation

/// Row 2: PostgreSQL stopped with `pg_ctl -m immediate` under load, down for a few seconds, started again.
/// Every committed notification must still be pushed; while it is down `/readyz` and an authenticated
/// device read must answer 503 within the API's deadline (no hang).
enum PostgresRestartRow {
    /// The API's deadline for one database call (`SECUREPUSH_API_DB_TIMEOUT`), plus a second of slack.
    static let answerDeadline = Double(ChaosRun.apiDatabaseTimeout + 1)

    static func plan(_ options: ChaosOptions) -> RowPlan {
        RowPlan(tail: .seconds(3)) { context in
            guard let control = context.options.postgresControl else { throw ChaosError("the pg-restart row needs --pg-control") }
            let report = context.report
            let downSeconds = context.options.outageSeconds
            let (ready, read, marks) = try await context.probingAPI { ready, read in
                let marks = Marks()
                try await context.hold(.seconds(1.5))
                marks.set("stopping")
                log("stopping PostgreSQL (immediate)")
                try await runControl(control, "stop")
                marks.set("down")
                try await context.hold(.seconds(downSeconds))
                marks.set("starting")
                log("starting PostgreSQL")
                try await runControl(control, "start")
                marks.set("up")
                log("PostgreSQL started")
                if let recovery = await context.waitReady() {
                    report.figure("ready again", seconds(recovery) + " after start")
                } else {
                    report.check("ready again after start", false)
                }
                try await context.hold(.seconds(1))
                return (ready, read, marks)
            }
            guard let down = marks.get("down"), let starting = marks.get("starting"), let stopping = marks.get("stopping") else { return }
            report.figure("down", seconds(starting.timeIntervalSince(stopping)))
            examine(ready, from: down, until: starting, phase: "the database is away", unavailable: .always, report: report)
            examine(read, from: down, until: starting, phase: "the database is away", unavailable: .notRequired, report: report)
        }
    }

    /// What a probe must have said while the database was unusable.
    enum Unavailable {
        /// Nothing: answering within the deadline is enough (an API call may wait for the database to return).
        case notRequired
        /// 503 at least once (readiness while the slots are taken: a call that got a slot may truly be ready).
        case sometimes
        /// 503 every time it answered before the database was back, and at least once.
        case always
    }

    /// Calls started while the database was unusable (`from..<until`): each answered (503, or 200 once it was
    /// back) within the deadline; readiness must also have said 503 meanwhile (a readiness check that waits
    /// for the database says nothing).
    static func examine(_ probe: APIProbe, from: Date, until: Date, phase: String, unavailable: Unavailable, report: RowReport) {
        let started = probe.recorded.filter { $0.startedAt >= from && $0.startedAt < until }
        let answeredWhileDown = started.filter { $0.finishedAt < until }
        let summary = probe.summary(startedIn: from...until)
        report.figure(
            "\(probe.name) while \(phase)",
            "\(summary.statuses), slowest \(seconds(summary.maxSeconds)); \(answeredWhileDown.count) answered before it was back")
        report.check(
            "\(probe.name): no hang (every call answered within \(Int(answerDeadline)) s)",
            summary.noAnswer == 0 && summary.maxSeconds <= answerDeadline)
        report.check("\(probe.name): only 503 or 200", summary.byStatus.keys.allSatisfy { $0 == 503 || $0 == 200 })
        let said503 = answeredWhileDown.filter { $0.answer.status == 503 }.count
        switch unavailable {
        case .notRequired:
            break
        case .sometimes:
            report.check("\(probe.name): 503 while \(phase)", said503 > 0)
        case .always:
            report.check("\(probe.name): 503 while \(phase)", said503 > 0 && said503 == answeredWhileDown.count)
        }
    }

    /// Runs the PostgreSQL control script (`stop` or `start`).
    static func runControl(_ script: String, _ action: String) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: script)
        process.arguments = [action]
        // Not our standard output: the server it starts must not hold the pipe `ops/chaos` reads the table from.
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        guard process.terminationStatus == 0 else { throw ChaosError("\(script) \(action) exited with \(process.terminationStatus)") }
    }
}
