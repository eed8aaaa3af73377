import Foundation
import PostgresNIO

/// The failover rows (`ops/failover`): SecurePush on a 3-node Patroni cluster with a synchronous standby,
/// reached through the row's route (a multi-host `DATABASE_URL` or HAProxy), one API process (`p1`, `--role
/// api`) and two dispatchers (`p2`, `p3`). While the producer commits at a steady rate, the row injects one
/// fault into the primary with `cluster.sh`: a planned switchover, kill -9 of its postmaster, SIGSTOP of its
/// postgres processes for `--fault-seconds` (then SIGCONT), or its traffic dropped for `--fault-seconds`.
/// Meanwhile `cluster.sh wait_writable` finds when a new primary commits a write (W).
///
/// Measured: lost pushes, phantom pushes (of ids not committed in the end: the producer's unknown outcomes
/// are looked up afterwards), duplicates; resume: from W to the first push the fakes accept after it (aim
/// ≤ 5 s); detect: from the fault to the last dispatcher's log line saying its LISTEN connection was lost
/// (aim ≤ 10 s; '-' when a dispatcher never says so); the API's answers (`/readyz` and a device read every
/// 250 ms) by status during the fault and after it (from `settle` after both W and the fault's end).
/// Checked (the verdict): nothing lost, no phantom, no committed id missing from the database, no API
/// answer other than 200 or 503 and none missing, only 200 after the fault, a push after W, the queue drained.
enum FailoverRow {
    /// How long before the fault the load runs undisturbed (the API's answers then count as "before").
    static let baseline = Duration.seconds(2)
    /// The resume and detect aims (notes in the verdict, not failures).
    static let resumeAim = 5.0
    static let detectAim = 10.0

    static func plan(_ options: ChaosOptions) -> RowPlan {
        let marks = Marks()
        let watcher = Shared<LogWatcher?>(nil)
        let newPrimary = Shared<String>("-")
        let probes = Shared<[APIProbe]>([])
        // The API gets `settle` after the fault to find the new primary; quick: a shorter after-window.
        let settle: Duration = .seconds(5)
        let afterWindow: Duration = options.quick ? .seconds(4) : .seconds(6)
        return RowPlan(
            layout: .apiAndTwoDispatchers,
            platforms: [.apns, .fcm],
            environment: [
                // Room for two dispatchers' pools and the API's on a 100-connection cluster shared with Patroni.
                "SECUREPUSH_DB_POOL_SIZE": "5"
            ],
            warmUp: .seconds(2),
            tail: .seconds(1),
            statementDeadline: .seconds(5),
            drainTimeout: .seconds(120),
            disrupt: { context in
                try await disrupt(
                    context, marks: marks, watcher: watcher, newPrimary: newPrimary, probes: probes, settle: settle, afterWindow: afterWindow)
            },
            verify: { context, attempts in
                try await verify(context, attempts, marks: marks, watcher: watcher.value, newPrimary: newPrimary.value, probes: probes.value)
            }
        )
    }

    /// The fault's `cluster.sh` subcommand and arguments, and its name in the table.
    static func fault(_ options: ChaosOptions) -> (subcommand: String, arguments: [String], label: String) {
        let seconds = String(format: "%g", options.faultSeconds)
        switch options.row {
        case .failoverKill: return ("kill_primary", [], "kill -9")
        case .failoverFreeze: return ("freeze_primary", [seconds], "freeze \(seconds) s")
        case .failoverDrop: return ("drop_primary", [seconds], "drop \(seconds) s")
        default: return ("switchover", [], "switchover")
        }
    }

    /// The table row of a failover row that could not run.
    static func couldNotRun(_ options: ChaosOptions, reason: String) -> String {
        "| \(options.route) | \(fault(options).label) | – | – | – | – | – | – | – | – | FAILED: could not run: \(reason) |"
    }

    private static func disrupt(
        _ context: ChaosContext, marks: Marks, watcher: Shared<LogWatcher?>, newPrimary: Shared<String>, probes: Shared<[APIProbe]>,
        settle: Duration, afterWindow: Duration
    ) async throws {
        let cluster = try ClusterCommand(options: context.options)
        let report = context.report
        let (subcommand, arguments, label) = fault(context.options)
        let old = try await cluster.leader()
        let logs = LogWatcher(Array(context.processes.dropFirst()))
        watcher.value = logs
        let watching = Task { await logs.run() }
        defer { watching.cancel() }
        // A fault that takes the primary away for N seconds may leave the cluster without one for about as long.
        let writeTimeout = 60 + context.options.faultSeconds
        try await context.probingAPI { ready, read in
            probes.value = [ready, read]
            marks.set("probing")
            try await context.hold(baseline)
            let since = Date()
            marks.set("fault", since)
            log("\(label) of \(old.name) (:\(old.port))")
            let injecting = Task { try await cluster.run(subcommand, arguments, timeout: .seconds(context.options.faultSeconds + 90)) }
            do {
                let answer = try await cluster.run(
                    "wait_writable", ["\(Int(writeTimeout))", "\(old.port)", String(format: "%.3f", since.timeIntervalSince1970)],
                    timeout: .seconds(writeTimeout + 30))
                let words = answer.split(whereSeparator: \.isWhitespace)
                if words.count >= 2, let seconds = Double(words[0]) {
                    marks.set("writable", since.addingTimeInterval(seconds))
                    newPrimary.value = ":" + words[1]
                    report.figure(
                        "new primary", ":\(words[1]) (was \(old.name) :\(old.port)), writable \(FailoverRow.seconds(seconds)) after the fault")
                    log("a new primary (:\(words[1])) committed a write \(FailoverRow.seconds(seconds)) after the fault")
                }
            } catch {
                log("no new primary: \(error)")
            }
            report.check("a new primary accepted writes", marks.get("writable") != nil)
            do {
                _ = try await injecting.value
            } catch {
                report.check("fault injected (\(error))", false)
            }
            marks.set("fault over")
            // The API gets `settle` to find the new primary; from then on it must say 200.
            try await context.hold(settle)
            marks.set("after")
            try await context.hold(afterWindow)
            marks.set("end")
        }
    }

    private static func verify(
        _ context: ChaosContext, _ attempts: [PushAttempt], marks: Marks, watcher: LogWatcher?, newPrimary: String, probes: [APIProbe]
    ) async throws {
        let (report, database) = (context.report, context.database)
        let ledger = context.producer.snapshot
        let loss = LossReport(ledger: ledger.committed, devices: context.devices, attempts: attempts)
        let faultLabel = fault(context.options).label

        // Phantoms: accepted pushes of ids that are not committed in the end.
        let accepted = attempts.filter { $0.accepted && !$0.isClear }
        let phantoms = accepted.filter { attempt in attempt.notification.map { ledger.committed[$0] == nil } ?? true }
        for phantom in phantoms.prefix(5) {
            log("phantom: \(phantom.notification?.uuidString ?? "unreadable id") to \(phantom.platform.rawValue) at \(phantom.receivedAt)")
        }
        report.check("phantom = 0", phantoms.isEmpty)

        // The ledger's committed ids must all be in the database (a commit acknowledged to the producer and lost
        // in the failover is a lost notification even if it was pushed before).
        let ids = Array(ledger.committed.keys)
        let missing = try await database.scalar(
            "SELECT count(*) FROM unnest(\(ids)::uuid[]) AS l(id) WHERE NOT EXISTS (SELECT 1 FROM securepush.notifications n WHERE n.id = l.id)",
            as: Int64.self)
        report.figure("committed ids missing from the database", "\(missing)")
        report.check("every committed id in the database", missing == 0)

        // Resume: from W to the first push accepted after it.
        var resumeCell = "–"
        if let writable = marks.get("writable") {
            if let first = accepted.map(\.receivedAt).filter({ $0 > writable }).min() {
                let resume = first.timeIntervalSince(writable)
                resumeCell = String(format: "%.1f", resume)
                if resume > resumeAim { report.note("resume > \(Int(resumeAim)) s") }
            }
            report.check("a push after the new primary accepted writes", resumeCell != "–")
            if let firstCommit = ledger.commitTimes.first(where: { $0 > writable }) {
                report.figure("producer's first commit after W", "+" + seconds(firstCommit.timeIntervalSince(writable)))
            }
        }
        if let fault = marks.get("fault") {
            let gaps = zip(ledger.commitTimes, ledger.commitTimes.dropFirst()).filter { $0.1 > fault }.map { $1.timeIntervalSince($0) }
            if let longest = gaps.max() { report.figure("producer's longest gap between commits", seconds(longest)) }
        }

        // Detect: from the fault to each dispatcher's first log line about a lost LISTEN connection.
        var detectCell = "–"
        if let fault = marks.get("fault"), let watcher {
            let dispatchers = context.processes.dropFirst().map(\.name)
            let lines = watcher.seen.filter { $0.seenAt >= fault && isListenerLoss($0.text) }
            var perProcess: [String: Double] = [:]
            for name in dispatchers {
                if let line = lines.first(where: { $0.process == name }) { perProcess[name] = line.seenAt.timeIntervalSince(fault) }
            }
            report.figure(
                "listener loss logged",
                dispatchers.map { name in "\(name) " + (perProcess[name].map { seconds($0) } ?? "never") }.joined(separator: ", "))
            if perProcess.count == dispatchers.count, let worst = perProcess.values.max() {
                detectCell = String(format: "%.1f", worst)
                if worst > detectAim { report.note("detect > \(Int(detectAim)) s") }
            } else {
                report.note("a dispatcher never logged its LISTEN connection lost")
            }
        }

        // The API during and after the fault.
        var duringCell = "–"
        var afterCell = "–"
        if let probing = marks.get("probing"), let fault = marks.get("fault"), let after = marks.get("after"), let end = marks.get("end") {
            let before = combined(probes, probing..<fault)
            let during = combined(probes, fault..<after)
            let afterwards = combined(probes, after..<end)
            duringCell = during.cell
            afterCell = afterwards.cell
            report.figure("API before the fault", before.cell)
            report.figure("API slowest answer", seconds(max(before.slowest, during.slowest, afterwards.slowest)))
            let all = [before, during, afterwards]
            let other = all.flatMap { $0.byStatus.keys }.filter { $0 != 200 && $0 != 503 }
            report.check("API: only 200 or 503 (\(Set(other).sorted().map(String.init).joined(separator: ",")))", other.isEmpty)
            report.check("API: every call answered", all.allSatisfy { $0.noAnswer == 0 })
            let unanswered = probes.flatMap { probe in
                probe.recorded.filter { $0.answer.status == nil }.map {
                    "\(probe.name) at fault" + String(format: "%+.2f s", $0.startedAt.timeIntervalSince(fault)) + ": "
                        + String(($0.answer.failure ?? "?").prefix(80))
                }
            }
            if !unanswered.isEmpty { report.figure("API calls without an answer", unanswered.joined(separator: "; ")) }
            report.check("API: 200 after the fault", afterwards.calls > 0 && afterwards.byStatus[200] == afterwards.calls)
            // When the API was steadily 200 again: the start of the first call after the last other answer.
            let samples = probes.flatMap { probe in probe.recorded.map { (probe.name, $0) } }.sorted { $0.1.startedAt < $1.1.startedAt }
            if let writable = marks.get("writable") {
                let lastBad = samples.last { $0.1.startedAt >= fault && $0.1.answer.status != 200 }?.1.startedAt
                let steady = lastBad.flatMap { bad in samples.first { $0.1.startedAt > bad }?.1.startedAt }
                report.figure("API steadily 200", steady.map { "from W" + String(format: "%+.2f s", $0.timeIntervalSince(writable)) } ?? "throughout")
            }
            // Every call, for the record: seconds since the fault, probe, status, seconds taken.
            let lines = samples.map { name, sample in
                String(format: "%.3f", sample.startedAt.timeIntervalSince(fault))
                    + "\t\(name)\t\(sample.answer.status.map(String.init) ?? "none (\(sample.answer.failure ?? "?"))")\t"
                    + String(format: "%.3f", sample.answer.seconds)
            }
            try? (["since_fault\tprobe\tstatus\tseconds"] + lines).joined(separator: "\n").write(
                toFile: "\(context.options.workDirectory)/api.tsv", atomically: true, encoding: .utf8)
        }

        // The relay route: both relays pushed, the relay's own count, and what must hold across its processes.
        if let relay = context.relay {
            let (cell, bothSent) = relay.pushesByRelay(accepted)
            report.figure("APNs pushes accepted, by relay", cell)
            report.check("both relays pushed", bothSent)
            // The relay counts a push when it admits it (before the send) and adds its counts once a second,
            // committed asynchronously: a kill -9 of its primary may forget what it added in the last moments
            // before the fault (docs/relay.md), never more. Pushes admitted whose send failed count too.
            let sent = attempts.filter(\.accepted)
            let usage = try await relay.usage()
            let slack =
                marks.get("fault").map { fault in sent.filter { $0.receivedAt > fault.addingTimeInterval(-2) && $0.receivedAt <= fault }.count } ?? 0
            report.figure("the relay's usage count", "\(usage) (pushes accepted at the fakes: \(sent.count); shortfall allowed: \(slack))")
            report.check("the relay's usage count short by at most its slack", Int(usage) >= sent.count - slack)
            let failures = try await relay.checkAcrossProcesses()
            for failure in failures { report.figure("across the relays", failure) }
            report.check("across the relays: a replayed request refused, a daily quota held", failures.isEmpty)
        }

        // finish() looked the outcome-unknown commits up ("N (k found committed)"): "333 (unknown 1 → 0)".
        var committedCell = "\(loss.committed)"
        if let uncertain = report.figures.first(where: { $0.0 == "uncertain commits" })?.1 {
            let numbers = uncertain.split(whereSeparator: { !$0.isNumber }).map(String.init)
            committedCell += numbers.count >= 2 ? " (unknown \(numbers[0]) → \(numbers[1]))" : " (unknown: \(uncertain))"
        }
        report.setFailoverCells([
            context.options.route, faultLabel + " (→ \(newPrimary))", committedCell, "\(loss.lost)" + (missing > 0 ? " (+\(missing) ids gone)" : ""),
            "\(phantoms.count)", "\(loss.duplicates)", resumeCell, detectCell, duringCell, afterCell,
        ])
    }

    /// A dispatcher's log line saying its LISTEN connection is gone (today's "LISTEN connection lost"; the
    /// words a dead-connection detector would use).
    static func isListenerLoss(_ line: String) -> Bool {
        let text = line.lowercased()
        guard text.contains("listen") else { return false }
        return ["lost", "dead", "timed out", "timeout", "unresponsive", "stale", "closed", "broken"].contains { text.contains($0) }
    }

    /// Both probes' answers to the calls started in `window`.
    struct Answers {
        var calls = 0
        var byStatus: [Int: Int] = [:]
        var noAnswer = 0
        var slowest = 0.0

        /// `503×12 200×3` (and `no answer×N`).
        var cell: String {
            var parts = byStatus.sorted { $0.key > $1.key }.map { "\($0.key)×\($0.value)" }
            if noAnswer > 0 { parts.append("no answer×\(noAnswer)") }
            return parts.isEmpty ? "none" : parts.joined(separator: " ")
        }
    }

    static func combined(_ probes: [APIProbe], _ window: Range<Date>) -> Answers {
        var answers = Answers()
        for probe in probes {
            for sample in probe.recorded where window.contains(sample.startedAt) {
                answers.calls += 1
                answers.slowest = max(answers.slowest, sample.answer.seconds)
                if let status = sample.answer.status { answers.byStatus[status, default: 0] += 1 } else { answers.noAnswer += 1 }
            }
        }
        return answers
    }

    private static func seconds(_ value: Double) -> String { String(format: "%.2f s", value) }
}
