import Foundation
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
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
            (object, html) = try await Self.status(client)
            health = Self.health(object)
            #expect(health.reasons.contains("1 fcm deliveries wait and no live dispatcher pushes fcm"), "\(health.reasons)")
            #expect(html.contains("no live dispatcher pushes fcm"))
            #expect(html.contains("<td>simulated</td>"), "the dispatchers table shows what each pushes")
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
}
