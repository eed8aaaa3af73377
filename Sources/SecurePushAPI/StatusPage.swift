import Foundation
import SecurePushCore
import SecurePushReports
import SecurePushStore

/// The status report as a page for a person (`GET /status` with `Accept: text/html`, `GET /status.html`):
/// the same figures as the JSON, server-rendered, with inline style only (no script, no external asset),
/// refreshed every 10 seconds. Like the report, it holds no payload, token, secret or user id; every text
/// that comes from the database is escaped.
enum StatusPage {
    /// The page's `Content-Security-Policy`: nothing but its own inline style.
    static let contentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// The page for a report taken at `report.generatedAt`.
    static func render(_ report: StatusReport) -> String {
        let now = report.generatedAt
        var body = header(subtitle: "generated \(timestamp(now))", health: report.health)
        body += section("Queue", queue(report))
        body += section("Deliveries finished", outcomes(report))
        body += section("Fetched after the push, last hour", fetches(report))
        body += section("Dispatchers", dispatchers(report, now: now))
        body += section("Circuit breakers not closed", circuits(report, now: now))
        body += section("Security events, last hour", security(report))
        body += section("Database", database(report.database))
        return document(body)
    }

    /// The page when the database did not answer (served with 503).
    static func unreachable(at now: Date) -> String {
        document(
            header(subtitle: "generated \(timestamp(now))", health: .init(status: "degraded", reasons: ["the database does not answer"]))
                + section("Database", "<p class=\"bad\">The database did not answer: no figures can be shown.</p>"))
    }

    // MARK: sections

    private static func queue(_ report: StatusReport) -> String {
        let queue = report.queue
        let lag = queue.oldestPendingAgeSeconds.map(seconds) ?? "none waiting"
        var html = figures([
            ("awaiting fan-out", "\(queue.awaitingFanOut)"), ("pending", "\(queue.pending)"), ("claimed", "\(queue.claimed)"),
            ("scheduled", "\(queue.scheduled)"), ("lag (oldest runnable)", lag),
            ("outcome feed held back", report.feed.heldSeconds.map(seconds) ?? "no"),
            ("webhook lag", report.feed.webhook.map { $0.lagSeconds.map(seconds) ?? "none waiting" } ?? "not running"),
        ])
        html += table(
            ["platform", "pending", "claimed", "retrying", "scheduled"],
            queue.byPlatform.map { [$0.platform, "\($0.pending)", "\($0.claimed)", "\($0.retrying)", "\($0.scheduled)"] },
            empty: "No deliveries waiting.")
        html += figures([
            ("notifications stored", "\(report.notifications.stored)"), ("unread", "\(report.notifications.unread)"),
            ("payloads purged", "\(report.notifications.purged)"),
            ("notifications scheduled", "\(report.notifications.scheduled)"),
        ])
        return html
    }

    private static func outcomes(_ report: StatusReport) -> String {
        func row(_ name: String, _ window: StatusReport.Window) -> [String] {
            [name] + window.labelledCounts.map { "\($0.count)" }
        }
        let labels = report.lastHour.labelledCounts.map(\.label)
        let windows = table(["window"] + labels, [row("last minute", report.lastMinute), row("last hour", report.lastHour)], empty: "")
        let platforms = table(
            ["last hour, per platform"] + labels + ["retried"], report.outcomesLastHour.map { row($0.platform, $0.window) + ["\($0.retried)"] },
            empty: "No delivery finished in the last hour.")
        return windows + platforms
    }

    private static func fetches(_ report: StatusReport) -> String {
        table(
            ["platform", "accepted", "fetched", "fetch ratio", "push to fetch p50", "p99"],
            report.fetchLastHour.map {
                [
                    $0.platform, "\($0.accepted)", "\($0.fetched)", String(format: "%.1f %%", $0.fetchRatio * 100),
                    $0.pushToFetchP50Seconds.map(seconds) ?? "–", $0.pushToFetchP99Seconds.map(seconds) ?? "–",
                ]
            },
            empty: "No push was accepted in the last hour.")
    }

    private static func dispatchers(_ report: StatusReport, now: Date) -> String {
        table(
            [
                "state", "dispatcher", "host", "pid", "role", "platforms", "version", "last heartbeat", "up since", "sent", "failed", "circuits",
                "listener",
            ],
            report.dispatchers.map { dispatcher in
                [
                    dispatcher.state.rawValue, String(dispatcher.id.prefix(8)), dispatcher.host, "\(dispatcher.pid)", dispatcher.role,
                    dispatcher.platforms.isEmpty ? "(not reported)" : dispatcher.platforms.joined(separator: ", "),
                    dispatcher.version, seconds(now.timeIntervalSince(dispatcher.lastHeartbeatAt)) + " ago",
                    timestamp(dispatcher.startedAt), "\(dispatcher.sent)", "\(dispatcher.failed)",
                    dispatcher.circuits.isEmpty ? "all closed" : "\(dispatcher.circuits.count) not closed",
                    StatusReport.listenerSummary(dispatcher, now: now),
                ]
            },
            empty: "No dispatcher has registered.", stateColumn: 0, wrapping: [2, 5, 6])
    }

    private static func circuits(_ report: StatusReport, now: Date) -> String {
        table(
            ["state", "platform", "host", "probe in", "dispatcher"],
            report.openCircuits.map { circuit in
                [
                    circuit.state.rawValue, circuit.platform, circuit.host ?? "(whole platform)",
                    circuit.openUntil.map { seconds(max(0, $0.timeIntervalSince(now))) } ?? "now", String(circuit.dispatcher.prefix(8)),
                ]
            },
            empty: "All closed: every provider answers.", stateColumn: 0, wrapping: [2])
    }

    /// Only the events that happened (the JSON keeps every kind, zeros included).
    private static func security(_ report: StatusReport) -> String {
        table(
            ["event", "count"], report.securityEventsThatHappened.map { [$0.event, "\($0.count)"] },
            empty: "None in the last hour.")
    }

    private static func database(_ database: StatusReport.Database) -> String {
        let pending = database.migrationsPending.isEmpty ? "none" : database.migrationsPending.joined(separator: ", ")
        return figures([("reachable", database.reachable ? "yes" : "no"), ("migrations pending", pending)])
    }

    // MARK: HTML

    private static func document(_ body: String) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta http-equiv="refresh" content="10">
        <title>SecurePush status</title>
        <style>
        body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1232px; padding: 16px 24px; color: #1d2330; background: #f6f7f9; }
        h1 { font-size: 22px; margin: 0; } h2 { font-size: 15px; margin: 0 0 8px; color: #39404d; }
        header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 16px; margin-bottom: 16px; }
        .reasons li { overflow-wrap: anywhere; }
        header .when { color: #6a7280; }
        section { background: #fff; border: 1px solid #dfe2e7; border-radius: 8px; padding: 12px 16px; margin-bottom: 12px; overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; margin: 6px 0; }
        th, td { text-align: left; vertical-align: top; padding: 4px 10px 4px 0; border-bottom: 1px solid #eef0f3; }
        td.wrap { overflow-wrap: anywhere; min-width: 5em; }
        th { font-weight: 600; color: #555d6b; font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
        .figures { display: flex; flex-wrap: wrap; gap: 8px 28px; margin: 4px 0 8px; }
        .figure { min-width: 0; overflow-wrap: anywhere; }
        .figure b { display: block; font-size: 20px; font-weight: 600; } .figure span { color: #6a7280; font-size: 12px; }
        .badge { border-radius: 10px; padding: 1px 10px; font-weight: 600; font-size: 13px; }
        .ok, .alive, .closed { color: #17693a; } .bad, .stale, .open { color: #a3231b; } .stopped, .half_open { color: #8a5a00; }
        .badge.ok { background: #dcf3e4; } .badge.bad { background: #fbe0de; }
        .empty { color: #6a7280; margin: 4px 0; }
        </style>
        </head>
        <body>
        \(body)
        </body>
        </html>

        """
    }

    private static func header(subtitle: String, health: StatusReport.Health) -> String {
        let ok = health.reasons.isEmpty
        let badge = ok ? "<span class=\"badge ok\">ok</span>" : "<span class=\"badge bad\">\(escape(health.status))</span>"
        var html = "<header><h1>SecurePush status</h1>\(badge)<span class=\"when\">\(escape(subtitle))</span></header>\n"
        if !ok {
            html += "<ul class=\"reasons bad\">" + health.reasons.map { "<li>\(escape($0))</li>" }.joined() + "</ul>\n"
        }
        return html
    }

    private static func section(_ title: String, _ content: String) -> String {
        "<section><h2>\(escape(title))</h2>\n\(content)</section>\n"
    }

    private static func figures(_ items: [(String, String)]) -> String {
        let cells = items.map { "<div class=\"figure\"><b>\(escape($0.1))</b><span>\(escape($0.0))</span></div>" }
        return "<div class=\"figures\">\(cells.joined())</div>\n"
    }

    /// A table that fits its section: cells wrap between words, and those of the `wrapping` columns (texts without
    /// spaces: host names, versions) anywhere.
    private static func table(_ headers: [String], _ rows: [[String]], empty: String, stateColumn: Int? = nil, wrapping: Set<Int> = []) -> String {
        guard !rows.isEmpty else { return empty.isEmpty ? "" : "<p class=\"empty\">\(escape(empty))</p>\n" }
        let head = headers.map { "<th>\(escape($0))</th>" }.joined()
        let body = rows.map { row in
            let cells = row.enumerated().map { index, value in
                if index == stateColumn { return "<td class=\"\(cssClass(value))\">\(escape(value))</td>" }
                return wrapping.contains(index) ? "<td class=\"wrap\">\(escape(value))</td>" : "<td>\(escape(value))</td>"
            }
            return "<tr>\(cells.joined())</tr>"
        }
        return "<table><thead><tr>\(head)</tr></thead><tbody>\n\(body.joined(separator: "\n"))\n</tbody></table>\n"
    }

    /// A state name as a class: letters and underscores only.
    private static func cssClass(_ value: String) -> String {
        String(value.filter { $0.isASCII && ($0.isLetter || $0 == "_") })
    }

    /// Escapes text for HTML element content and quoted attribute values.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    private static func seconds(_ value: Double) -> String {
        switch value {
        case ..<1: String(format: "%.0f ms", value * 1000)
        case ..<120: String(format: "%.1f s", value)
        case ..<7200: String(format: "%.0f min", value / 60)
        default: String(format: "%.1f h", value / 3600)
        }
    }

    private static func timestamp(_ date: Date) -> String {
        APITimestamp.string(date)
    }
}
