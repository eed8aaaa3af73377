import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import PostgresNIO
import SecurePushPostgres
import SecurePushServer
import SecurePushStore
import SecurePushTestSupport
import Testing

@Suite("HTTP API: unavailability and operations endpoints")
struct APIOperationsTests {
    /// Holds `lock` in an open transaction on a connection of its own while `body` runs.
    static func whileLocked(_ db: TestDatabase, _ lock: String, _ body: @Sendable () async throws -> Void) async throws {
        let connection = try await PostgresConnection.connect(configuration: try db.url.connectionConfiguration(), id: 1, logger: db.logger)
        do {
            try await connection.query("BEGIN", logger: db.logger)
            try await connection.query(PostgresQuery(unsafeSQL: lock), logger: db.logger)
            try await body()
            try await connection.query("ROLLBACK", logger: db.logger)
            try await connection.close()
        } catch {
            try? await connection.close()
            throw error
        }
    }

    @Test("a database call past its deadline answers 503 unavailable, quickly and without details")
    func unavailable() async throws {
        try await TestDatabase.with { db in
            let logs = CapturedLogs()
            // Shorter than the reads' own 500 ms lock wait (issue 47), so the deadline is what answers.
            try await APIHarness.with(db, logs: logs, databaseTimeout: .milliseconds(300)) { api, client in
                let device = try await registerDevice(client, api, user: "una", token: "una-1")
                let id = try await db.enqueue(user: "una", payload: #"{"secret":"LOCKED-PAYLOAD"}"#)
                try await Self.whileLocked(db, "LOCK TABLE securepush.notifications IN ACCESS EXCLUSIVE MODE") {
                    let clock = ContinuousClock()
                    let start = clock.now
                    let response = try await client.execute(uri: "/v1/notifications/\(id)", method: .get, headers: .bearer(device))
                    expectError(response, .serviceUnavailable, "unavailable")
                    #expect(clock.now - start < .seconds(15), "answered at the deadline, not when the lock goes")
                    #expect(!response.body.text.contains("LOCKED-PAYLOAD"))
                }
                // Once the lock is gone the same read works.
                let response = try await client.execute(uri: "/v1/notifications/\(id)", method: .get, headers: .bearer(device))
                #expect(response.status == .ok)
            }
            #expect(logs.all.contains { $0.contains("request timed out waiting for the database") })
        }
    }

    @Test("request metrics count what the client got: a read past the database deadline is a 503, never a 500")
    func deadlineCountedAsServed() async throws {
        LoggingBootstrap.bootstrap(level: .critical)
        try await TestDatabase.with { db in
            try await APIHarness.with(db, databaseTimeout: .seconds(1)) { api, client in
                let device = try await registerDevice(client, api, user: "metered", token: "metered-1")
                let id = try await db.enqueue(user: "metered", payload: "{}")
                let before = try await Self.readCounts(client)
                try await Self.whileLocked(db, "LOCK TABLE securepush.notifications IN ACCESS EXCLUSIVE MODE") {
                    let response = try await client.execute(uri: "/v1/notifications/\(id)", method: .get, headers: .bearer(device))
                    expectError(response, .serviceUnavailable, "unavailable")
                }
                let after = try await Self.readCounts(client)
                #expect(after["503", default: 0] == before["503", default: 0] + 1, "the 503 is counted: \(before) -> \(after)")
                #expect(after["500", default: 0] == before["500", default: 0], "no 500 is counted: \(before) -> \(after)")
            }
        }
    }

    /// `hb_requests` of the single-read route by status code, from `/metrics`.
    static func readCounts(_ client: some TestClientProtocol) async throws -> [String: Double] {
        let text = try await client.execute(uri: "/metrics", method: .get).body.text
        var counts: [String: Double] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("hb_requests{") && line.contains("/v1/notifications/") && !line.contains("fetch")
        {
            guard let start = line.range(of: #"http_response_status_code=""#) else { continue }
            let status = String(line[start.upperBound...].prefix(3))
            counts[status, default: 0] += Double(line.split(separator: " ").last ?? "") ?? 0
        }
        return counts
    }

    @Test("/status and /readyz answer 503 when the database does not answer, and log why")
    func unreachableIsLogged() async throws {
        try await TestDatabase.with { db in
            let logs = CapturedLogs()
            try await APIHarness.with(db, logs: logs, databaseTimeout: .seconds(2)) { _, client in
                #expect(try await client.execute(uri: "/readyz", method: .get).status == .ok)
                try await Self.whileLocked(db, "LOCK TABLE securepush.schema_migrations IN ACCESS EXCLUSIVE MODE") {
                    let ready = try await client.execute(uri: "/readyz", method: .get)
                    expectError(ready, .serviceUnavailable, "not_ready")
                    let status = try await client.execute(uri: "/status", method: .get)
                    #expect(status.status == .serviceUnavailable)
                    let database = status.body.json["database"] as? [String: Any]
                    #expect(database?["reachable"] as? Bool == false)
                }
            }
            let lines = logs.all
            #expect(
                lines.contains {
                    $0.contains("readiness check: the database is unreachable") && $0.contains("db.code") && $0.contains("deadline exceeded")
                })
            #expect(lines.contains { $0.contains("status report: the database is unreachable") && $0.contains("db.code") })
        }
    }

    @Test("/metrics renders Prometheus text with request and delivery metrics")
    func metrics() async throws {
        LoggingBootstrap.bootstrap(level: .critical)
        try await APIHarness.withDatabase { db, api, client in
            let harness = try DispatcherHarness(database: db)
            let device = try await registerDevice(client, api, user: "met", token: "met-1")
            let id = try await db.enqueue(user: "met", payload: #"{"secret":"METRIC-PAYLOAD"}"#)
            try await db.eventually("pushed") { harness.pushes.count == 1 }
            await harness.stop()
            #expect(try await client.execute(uri: "/v1/notifications/\(id)", method: .get, headers: .bearer(device)).status == .ok)
            let response = try await client.execute(uri: "/metrics", method: .get)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true)
            let text = response.body.text
            let sent = text.split(separator: "\n").first { $0.hasPrefix(#"securepush_deliveries_total{outcome="sent"}"#) }
            let count = sent.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
            #expect(count >= 1, "the delivery counter counted the push: \(sent ?? "missing")")
            #expect(text.contains(#"securepush_push_duration"#))
            #expect(text.contains("# TYPE securepush_deliveries_total counter"))
            // Every family says what it is (issue 50: most had no # HELP).
            let lines = text.split(separator: "\n")
            let undocumented = lines.indices.compactMap { index -> Substring? in
                guard lines[index].hasPrefix("# TYPE "), let name = lines[index].split(separator: " ").dropFirst(2).first else { return nil }
                return index > 0 && lines[index - 1].hasPrefix("# HELP \(name) ") ? nil : name
            }
            #expect(undocumented.isEmpty, "families without # HELP: \(undocumented)")
            #expect(text.contains("hb_requests") || text.contains("http_requests"), "request metrics are exported")
            #expect(!text.contains("METRIC-PAYLOAD"))
            #expect(!text.contains(device), "no credential in a metric")
            #expect(!text.contains("met-1"), "no token in a metric")
        }
    }
}
