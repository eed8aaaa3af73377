import Foundation
import SecurePushCore
import SecurePushReports
import Testing

@testable import SecurePushAPI
@testable import SecurePushStore

/// `/status` has three views of one `StatusReport`: the JSON, the HTML page and the CLI table. A figure added to the
/// report must show in all three.
@Suite("Status report views")
struct StatusViewsTests {
    /// A report whose every figure is a distinct number or word (durations that read the same after each view's
    /// rounding: the page shows 7.5 s, the table 7.500 s).
    static func report() -> StatusReport {
        let now = Date()
        let circuit = CircuitSnapshot(platform: "webpush", host: "push.example.net", state: .open, openUntil: now.addingTimeInterval(30))
        let report = StatusReport(
            generatedAt: now,
            database: .init(reachable: true, migrationsPending: ["016_next_release.sql"]),
            queue: .init(
                pending: 41001, claimed: 41002, scheduled: 41061, awaitingFanOut: 41069, oldestPendingAgeSeconds: 12.5,
                byPlatform: [.init(platform: "apns", pending: 41003, claimed: 41004, retrying: 41005, scheduled: 41062)]),
            notifications: .init(stored: 41006, unread: 41007, purged: 41008, scheduled: 41063),
            dispatchers: [
                .init(
                    id: "5f0c0a4e-0000-4000-8000-000000000001", host: "dispatch-host-a", pid: 41053, role: "dispatcher", version: "9.8.7",
                    startedAt: now.addingTimeInterval(-600), lastHeartbeatAt: now.addingTimeInterval(-1), state: .alive, sent: 41051,
                    failed: 41052, circuits: [circuit], listenerConnected: true, listenerHeardAt: now.addingTimeInterval(-2),
                    platforms: ["platform-word-41054"])
            ],
            openCircuits: [
                .init(platform: "webpush", host: "push.example.net", state: .open, openUntil: circuit.openUntil, dispatcher: "5f0c0a4e")
            ],
            lastMinute: .init(sent: 41011, failed: 41012, tokenInvalid: 41013, expired: 41014, cancelled: 41015, superseded: 41016),
            lastHour: .init(sent: 41021, failed: 41022, tokenInvalid: 41023, expired: 41024, cancelled: 41025, superseded: 41026),
            outcomesLastHour: [
                .init(
                    platform: "platform-word-41080",
                    outcomes: .init(sent: 41081, failed: 41082, tokenInvalid: 41083, expired: 41084, cancelled: 41085, superseded: 41086),
                    retried: 41087)
            ],
            fetchLastHour: [
                .init(platform: "fcm", accepted: 41031, fetched: 41032, fetchRatio: 0.25, pushToFetchP50Seconds: 3.5, pushToFetchP99Seconds: 7.5)
            ],
            securityEventsLastHour: ["throttled": 41041, "device_registered": 41042]
        )
        var healthy = report
        healthy.health = .init(status: "degraded", reasons: ["health-reason-41071"])
        return healthy
    }

    /// Every figure in `value`, found by walking its stored properties (so a figure added to the report is checked
    /// without editing this test), each with the texts a view may show it as: a number as written, a ratio as a
    /// percentage, an id by its first 8 characters. Dates, flags and state words are left out.
    static func figures(in value: Any) -> [[String]] {
        switch value {
        case let number as Int64: return [["\(number)"]]
        case let number as Int32: return [["\(number)"]]
        case let number as Double: return [["\(number)", String(format: "%.1f %%", number * 100)]]
        case let text as String: return [[text, String(text.prefix(8))]]
        case is Date, is Bool: return []
        default:
            let mirror = Mirror(reflecting: value)
            if mirror.displayStyle == .enum { return [] }
            return mirror.children.flatMap { figures(in: $0.value) }
        }
    }

    @Test("every figure of the report appears in the JSON, the HTML page and the CLI table")
    func everyFigureInEveryView() throws {
        let report = Self.report()
        let figures = Self.figures(in: report)
        #expect(figures.count >= 40, "the walk finds the report's figures (\(figures.count))")
        let views = [
            "JSON": String(decoding: try StatusReport.jsonEncoder.encode(report), as: UTF8.self),
            "HTML": StatusPage.render(report),
            "CLI table": StatusTable(report: report).render(),
        ]
        for (name, text) in views.sorted(by: { $0.key < $1.key }) {
            for forms in figures {
                #expect(forms.contains { text.contains($0) }, "the \(name) view does not show \(forms[0])")
            }
        }
    }

    @Test("security events: the page and the CLI show only those that happened, or one line when none did; the JSON keeps every kind")
    func securityRowsWithoutZeros() throws {
        var report = Self.report()
        report.securityEventsLastHour = ["device_registered": 3, "throttled": 0, "device_revoked": 0, "token_invalid": 2]
        var html = StatusPage.render(report)
        #expect(html.contains("<td>device_registered</td><td>3</td>") && html.contains("<td>token_invalid</td><td>2</td>"))
        #expect(!html.contains("throttled") && !html.contains("device_revoked"), "no row for an event that did not happen")
        #expect(!html.contains("None in the last hour."))
        var table = StatusTable(report: report).render()
        #expect(table.contains("security      last hour: device_registered 3, token_invalid 2\n"))

        report.securityEventsLastHour = ["device_registered": 0, "throttled": 0]
        html = StatusPage.render(report)
        #expect(html.contains("<h2>Security events, last hour</h2>\n<p class=\"empty\">None in the last hour.</p>"))
        #expect(!html.contains("device_registered") && !html.contains("throttled"))
        table = StatusTable(report: report).render()
        #expect(table.contains("security      last hour: none\n"))
        let json = try #require(
            try JSONSerialization.jsonObject(with: StatusReport.jsonEncoder.encode(report)) as? [String: Any])
        #expect(json["security_events_last_hour"] as? [String: Int] == ["device_registered": 0, "throttled": 0], "the JSON keeps the zeros")
    }

    @Test("outcomes per platform: one row per platform on the page and in the CLI table, an empty hour said in one line")
    func outcomesPerPlatform() throws {
        var report = Self.report()
        #expect(
            StatusPage.render(report).contains(
                "<tr><td>platform-word-41080</td><td>41081</td><td>41082</td><td>41083</td><td>41084</td><td>41085</td><td>41086</td><td>41087</td></tr>"
            ))
        #expect(
            StatusTable(report: report).render().contains(
                "  platform-word-41080 sent 41081, failed 41082, token invalid 41083, expired 41084, cancelled 41085, superseded 41086, retried 41087"
            ))
        report.outcomesLastHour = []
        #expect(StatusPage.render(report).contains("No delivery finished in the last hour."))
        #expect(StatusTable(report: report).render().contains("(no delivery finished in the last hour)"))
        let json = try #require(
            try JSONSerialization.jsonObject(with: StatusReport.jsonEncoder.encode(report)) as? [String: Any])
        #expect((json["outcomes_last_hour"] as? [Any])?.isEmpty == true)
    }
}
