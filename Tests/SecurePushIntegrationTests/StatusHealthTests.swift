import Foundation
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import SecurePushCore
import SecurePushStore
import SecurePushTestSupport
import Testing

/// `/status` tells the truth (issue 37): "degraded", with the reason, for a queue lag over the threshold, a
/// platform whose deliveries wait while no live dispatcher pushes it, and a fetch ratio under the threshold;
/// in the JSON, the page and the CLI's report alike.
@Suite("HTTP API: status health")
struct StatusHealthTests {
    static func status(_ client: some TestClientProtocol) async throws -> (json: [String: Any], html: String) {
        let json = try await client.execute(uri: "/status", method: .get, headers: [:])
        let html = try await client.execute(uri: "/status.html", method: .get, headers: [:])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.body.readableBytesView)) as? [String: Any])
        return (object, html.body.text)
    }

    static func health(_ object: [String: Any]) -> (status: String, reasons: [String]) {
        let health = object["health"] as? [String: Any] ?? [:]
        return (health["status"] as? String ?? "", health["reasons"] as? [String] ?? [])
    }

    @Test("each condition makes the report degraded and names itself; the page shows the reasons; ok again once it is gone")
    func degradedForEachCondition() async throws {
        try await APIHarness.withDatabase { db, _, client in
            // A live dispatcher that pushes simulated only.
            let worker = UUID()
            try await db.execute(
                """
                INSERT INTO securepush.dispatchers (id, host, pid, role, version, platforms)
                VALUES (\(worker), 'health-host', 1, 'dispatcher', 'test', ARRAY['simulated'])
                """)
            var (object, html) = try await Self.status(client)
            #expect(Self.health(object).status == "ok", "\(Self.health(object).reasons)")
            #expect(html.contains("<span class=\"badge ok\">ok</span>"))

            // 1. Queue lag: a due delivery that waited 90 s (default threshold 60 s).
            _ = try await db.insertDevice(user: "hal", token: "hal-1")
            _ = try await db.enqueue(user: "hal", payload: "{}")
            try await db.fanOut()
            try await db.execute("UPDATE securepush.deliveries SET run_at = now() - interval '90 seconds'")
            (object, html) = try await Self.status(client)
            var health = Self.health(object)
            #expect(health.status == "degraded")
            #expect(
                health.reasons.contains { $0.contains("the oldest due delivery has waited 9") && $0.contains("more than 60 s") }, "\(health.reasons)")
            #expect(html.contains(">degraded</span>") && html.contains("the oldest due delivery has waited"))
            try await db.execute("DELETE FROM securepush.deliveries")

            // 2. A platform no live dispatcher pushes.
            _ = try await db.insertDevice(user: "ida", platform: "fcm", token: "ida-fcm-registration-token-0123456789")
            _ = try await db.enqueue(user: "ida", payload: "{}")
            try await db.fanOut()
            (object, html) = try await Self.status(client)
            health = Self.health(object)
            #expect(health.reasons.contains("1 fcm deliveries wait and no live dispatcher pushes fcm"), "\(health.reasons)")
            #expect(html.contains("no live dispatcher pushes fcm"))
            #expect(html.contains("<td class=\"wrap\">simulated</td>"), "the dispatchers table shows what each pushes")
            try await db.execute("DELETE FROM securepush.deliveries")

            // 3. A fetch ratio under 50 % with enough pushes: 20 accepted in the last hour, 4 fetched.
            let device = try await db.insertDevice(user: "jo", token: "jo-1")
            for index in 0..<20 {
                let id = try await db.enqueue(user: "jo", payload: "{}")
                try await db.execute(
                    """
                    INSERT INTO securepush.delivery_log (id, notification_id, device_id, platform, outcome, attempts, created_at, accepted_at, kind)
                    VALUES (gen_random_uuid(), \(id), \(device), 'simulated', 'sent', 1, now(), now() - interval '10 minutes', 'notify')
                    """)
                if index < 4 {
                    try await db.execute("INSERT INTO securepush.fetches (notification_id, device_id) VALUES (\(id), \(device))")
                }
            }
            try await db.execute("DELETE FROM securepush.deliveries")
            (object, html) = try await Self.status(client)
            health = Self.health(object)
            #expect(
                health.reasons.contains { $0.hasPrefix("simulated: 20 % of the last hour's pushes were fetched (below 50 %)") }, "\(health.reasons)")
            #expect(html.contains("simulated: 20 % of the last hour"))

            // Gone: ok again.
            try await db.execute("DELETE FROM securepush.delivery_log")
            (object, _) = try await Self.status(client)
            #expect(Self.health(object).status == "ok", "\(Self.health(object).reasons)")
        }
    }

    @Test("outcomes per platform: each outcome of a real push (and of a delivery that never left) is counted in its platform's row")
    func outcomesPerPlatform() async throws {
        try await APIHarness.withDatabase { db, _, client in
            // The simulated platform answers by token: a retry then a success, a failure, a dead token, else a success.
            let harness = try DispatcherHarness(database: db) { push in
                switch push.target.token {
                case "outcome-retry": push.attempt <= 1 ? .retry(after: .milliseconds(10), reason: "simulated retry") : .sent(messageID: nil)
                case "outcome-failed": .failed(reason: "simulated failure")
                case "outcome-invalid": .tokenInvalid(reason: "simulated dead token")
                default: .sent(messageID: nil)
                }
            }
            for token in ["outcome-sent", "outcome-retry", "outcome-failed", "outcome-invalid"] {
                _ = try await db.insertDevice(user: token, token: token)
                _ = try await db.enqueue(user: token, payload: "{}")
            }
            try await db.eventually("the four simulated pushes finished", count: "SELECT count(*)::bigint FROM securepush.delivery_log", is: 4)
            await harness.stop()

            // fcm, which no dispatcher pushes: its deliveries wait, then end without a push.
            _ = try await db.insertDevice(user: "fay", platform: "fcm", token: "fay-fcm-registration-token-0123456789")
            let cancelled = try await db.enqueue(user: "fay", payload: "{}")
            try await db.execute("SELECT * FROM securepush.cancel(\(cancelled))")
            let superseded: UUID = try await db.scalar(
                "INSERT INTO securepush.notifications (user_id, payload, collapse_key) VALUES ('fay', '{}', 'score') RETURNING id")
            let newer: UUID = try await db.scalar(
                "INSERT INTO securepush.notifications (user_id, payload, collapse_key) VALUES ('fay', '{}', 'score') RETURNING id")
            try await db.fanOut()
            try await db.execute("UPDATE securepush.deliveries SET expires_at = now() WHERE notification_id = \(newer)")
            let maintenance = PostgresQueueMaintenance(client: db.client, logger: db.logger)
            #expect(try await maintenance.expirePending() == 1)
            let outcomes: [String] = try await db.scalar(
                "SELECT array_agg(outcome ORDER BY outcome) FROM securepush.delivery_log WHERE notification_id IN (\(cancelled), \(superseded), \(newer))"
            )
            #expect(outcomes == ["cancelled", "expired", "superseded"])

            let (object, html) = try await Self.status(client)
            let rows = try #require(object["outcomes_last_hour"] as? [[String: Any]])
            func row(_ platform: String) -> [String: Int] {
                (rows.first { $0["platform"] as? String == platform } ?? [:]).compactMapValues { $0 as? Int }
            }
            #expect(rows.map { $0["platform"] as? String } == ["fcm", "simulated"], "a row per platform with finished deliveries, by name")
            #expect(
                row("simulated") == [
                    "sent": 2, "failed": 1, "token_invalid": 1, "expired": 0, "cancelled": 0, "superseded": 0, "retried": 1,
                ])
            #expect(
                row("fcm") == [
                    "sent": 0, "failed": 0, "token_invalid": 0, "expired": 1, "cancelled": 1, "superseded": 1, "retried": 0,
                ])
            let lastHour = (object["last_hour"] as? [String: Any] ?? [:]).compactMapValues { $0 as? Int }
            #expect(
                lastHour == ["sent": 2, "failed": 1, "token_invalid": 1, "expired": 1, "cancelled": 1, "superseded": 1],
                "the platforms' rows add up to the hour's window")
            #expect(html.contains("<tr><td>fcm</td><td>0</td><td>0</td><td>0</td><td>1</td><td>1</td><td>1</td><td>0</td></tr>"))
            #expect(html.contains("<tr><td>simulated</td><td>2</td><td>1</td><td>1</td><td>0</td><td>0</td><td>0</td><td>1</td></tr>"))

            // Older than an hour: gone from the rows (and from the window).
            try await db.execute("UPDATE securepush.delivery_log SET finished_at = now() - interval '61 minutes'")
            let (later, laterHTML) = try await Self.status(client)
            #expect((later["outcomes_last_hour"] as? [Any])?.isEmpty == true)
            #expect(laterHTML.contains("No delivery finished in the last hour."))
        }
    }
}
