import Foundation
import SecurePushCore
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
                pending: 41001, claimed: 41002, scheduled: 41061, oldestPendingAgeSeconds: 12.5,
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
}
