import Foundation
import SecurePushCore
import SecurePushReports
import SecurePushStore

/// The status report as text for a terminal (`securepush status`): the third view of the one report, beside
/// `/status`'s JSON and its HTML page (`StatusPage`).
public struct StatusTable {
    let report: StatusReport

    /// A table for `report`.
    public init(report: StatusReport) {
        self.report = report
    }

    /// The table, one figure group per line.
    public func render() -> String {
        var lines: [String] = []
        lines.append("health        \(report.health.status)")
        for reason in report.health.reasons {
            lines.append("  \(reason)")
        }
        let lag = report.queue.oldestPendingAgeSeconds.map { String(format: "%.3f s", $0) } ?? "none"
        lines.append(
            "database      reachable, \(report.database.migrationsPending.isEmpty ? "schema up to date" : "PENDING MIGRATIONS: " + report.database.migrationsPending.joined(separator: ", "))"
        )
        lines.append(
            "queue         \(report.queue.awaitingFanOut) awaiting fan-out, \(report.queue.pending) pending, \(report.queue.claimed) in flight, \(report.queue.scheduled) scheduled, oldest runnable pending: \(lag)"
        )
        for platform in report.queue.byPlatform {
            lines.append(
                "  \(pad(platform.platform, 12))\(platform.pending) pending (\(platform.retrying) awaiting retry), \(platform.claimed) in flight, \(platform.scheduled) scheduled"
            )
        }
        lines.append(
            "notifications \(report.notifications.stored) stored, \(report.notifications.unread) unread, \(report.notifications.purged) purged, \(report.notifications.scheduled) scheduled"
        )
        func counts(_ window: StatusReport.Window) -> String {
            window.labelledCounts.map { "\($0.label) \($0.count)" }.joined(separator: ", ")
        }
        for (name, window) in [("last minute", report.lastMinute), ("last hour", report.lastHour)] {
            lines.append("\(pad(name, 14))\(counts(window))")
        }
        lines.append("outcomes      last hour, per platform: deliveries finished, and how many of them were retried")
        if report.outcomesLastHour.isEmpty {
            lines.append("  (no delivery finished in the last hour)")
        }
        for row in report.outcomesLastHour {
            lines.append("  \(pad(row.platform, 12))\(counts(row.window)), retried \(row.retried)")
        }
        lines.append("fetches       last hour, per platform: pushes accepted, fetched by their device, push-to-fetch latency")
        if report.fetchLastHour.isEmpty {
            lines.append("  (no push accepted in the last hour)")
        }
        for row in report.fetchLastHour {
            let ratio = String(format: "%.1f %%", row.fetchRatio * 100)
            let p50 = row.pushToFetchP50Seconds.map { String(format: "%.3f s", $0) } ?? "-"
            let p99 = row.pushToFetchP99Seconds.map { String(format: "%.3f s", $0) } ?? "-"
            lines.append("  \(pad(row.platform, 12))accepted \(row.accepted), fetched \(row.fetched) (\(ratio)), p50 \(p50), p99 \(p99)")
        }
        let security = report.securityEventsThatHappened.map { "\($0.event) \($0.count)" }
        lines.append("security      last hour: \(security.isEmpty ? "none" : security.joined(separator: ", "))")
        lines.append("dispatchers   \(report.dispatchers.count)")
        for dispatcher in report.dispatchers {
            let age = String(format: "%.1f s ago", Date().timeIntervalSince(dispatcher.lastHeartbeatAt))
            lines.append(
                "  \(pad(dispatcher.state.rawValue, 8))\(dispatcher.host) pid \(dispatcher.pid) (\(dispatcher.role) \(dispatcher.version), pushes \(dispatcher.platforms.isEmpty ? "(not reported)" : dispatcher.platforms.joined(separator: ", "))), heartbeat \(age), sent \(dispatcher.sent), failed \(dispatcher.failed), listener \(StatusReport.listenerSummary(dispatcher, now: Date()))"
            )
            for circuit in dispatcher.circuits {
                lines.append(
                    "    circuit \(describe(platform: circuit.platform, host: circuit.host, state: circuit.state, openUntil: circuit.openUntil))")
            }
        }
        lines.append("circuits      \(report.openCircuits.isEmpty ? "all closed" : "\(report.openCircuits.count) open or half-open")")
        for circuit in report.openCircuits {
            let description = describe(platform: circuit.platform, host: circuit.host, state: circuit.state, openUntil: circuit.openUntil)
            lines.append("  \(description), dispatcher \(circuit.dispatcher)")
        }
        return lines.joined(separator: "\n")
    }

    /// `apns open for 2.5 s more` or `webpush push.example.com half-open (probing)`.
    private func describe(platform: String, host: String?, state: CircuitBreaker.Phase, openUntil: Date?) -> String {
        let key = host.map { "\(platform) \($0)" } ?? platform
        switch state {
        case .open:
            let left = max(0, openUntil?.timeIntervalSince(Date()) ?? 0)
            return "\(key) open for \(String(format: "%.1f", left)) s more"
        case .halfOpen:
            return "\(key) half-open (probing)"
        case .closed:
            return "\(key) closed"
        }
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }
}
