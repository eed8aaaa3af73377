import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import PostgresNIO
import SecurePushServer
import SecurePushTestSupport
import Testing

@Suite("HTTP API: the status page")
struct StatusPageTests {
    static let browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"

    static func accept(_ value: String) -> HTTPFields {
        var fields = HTTPFields()
        fields[.accept] = value
        return fields
    }

    @Test("a browser gets the page, other clients the JSON; the page escapes what it shows and holds no payload, user id or credential")
    func page() async throws {
        LoggingBootstrap.bootstrap(level: .critical)
        try await APIHarness.withDatabase { db, api, client in
            let harness = try DispatcherHarness(database: db)
            let quiet = try await client.execute(uri: "/status.html", method: .get, headers: [:]).body.text
            #expect(
                quiet.contains("<h2>Security events, last hour</h2>\n<p class=\"empty\">None in the last hour.</p>"),
                "one line when no security event happened")
            let device = try await registerDevice(client, api, user: "page-user-7731", token: "page-token-1")
            let id = try await db.enqueue(user: "page-user-7731", payload: #"{"title":"PAGE-PAYLOAD"}"#)
            try await db.eventually("pushed") { harness.pushes.count == 1 }
            #expect(try await client.execute(uri: "/v1/notifications/\(id)", method: .get, headers: .bearer(device)).status == .ok)
            try await db.execute(
                """
                INSERT INTO securepush.dispatchers (id, host, pid, role, version)
                VALUES (gen_random_uuid(), '<script>alert(1)</script>', 4242, 'dispatcher', '1.0"><b>')
                """)

            for (uri, accept) in [("/status", Self.browserAccept), ("/status.html", "*/*")] {
                let response = try await client.execute(uri: uri, method: .get, headers: Self.accept(accept))
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8", "\(uri)")
                #expect(response.headers[.contentSecurityPolicy]?.hasPrefix("default-src 'none'") == true)
                let html = response.body.text
                #expect(html.hasPrefix("<!doctype html>"))
                #expect(html.contains("<title>SecurePush status</title>"))
                #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "the host is escaped")
                #expect(html.contains("1.0&quot;&gt;&lt;b&gt;"), "the version is escaped")
                #expect(!html.contains("<script"), "no script, and nothing from the database unescaped")
                #expect(!html.contains("http://") && !html.contains("https://"), "no external asset")
                #expect(html.contains("<td>simulated</td>"), "the fetch table names the platform")
                #expect(html.contains("100.0 %"), "the one push was fetched")
                #expect(html.contains("<td class=\"alive\">alive</td>"), "the harness's dispatcher is alive")
                #expect(html.contains("<td>device_registered</td><td>1</td>"), "a security event that happened has its row")
                #expect(!html.contains("<td>throttled</td>") && !html.contains("<td>device_revoked</td>"), "no row for a zero count")
                #expect(!html.contains("None in the last hour."))
                for secret in ["PAGE-PAYLOAD", "page-user-7731", "page-token-1", device] {
                    #expect(!html.contains(secret), "the page shows no payload, user id, token or credential")
                }
            }
            await harness.stop()

            for accept in [nil, "*/*", "application/json", "text/html;q=0.1, */*", "application/json, text/html;q=0.5"] {
                let response = try await client.execute(uri: "/status", method: .get, headers: accept.map(Self.accept) ?? [:])
                #expect(response.status == .ok)
                #expect(response.headers[.contentType]?.hasPrefix("application/json") == true, "Accept: \(accept ?? "none")")
                #expect(response.body.json["queue"] != nil)
                let security = response.body.json["security_events_last_hour"] as? [String: Int]
                #expect(security?["throttled"] == 0 && security?["device_registered"] == 1, "the JSON keeps every kind, zeros included")
            }
        }
    }

    @Test("the page says when the database does not answer (503)")
    func unreachable() async throws {
        try await TestDatabase.with { db in
            try await APIHarness.with(db, databaseTimeout: .seconds(2)) { _, client in
                try await APIOperationsTests.whileLocked(db, "LOCK TABLE securepush.schema_migrations IN ACCESS EXCLUSIVE MODE") {
                    let response = try await client.execute(uri: "/status.html", method: .get)
                    #expect(response.status == .serviceUnavailable)
                    #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                    #expect(response.body.text.contains("The database did not answer"))
                }
            }
        }
    }
}
