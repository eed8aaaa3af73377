import Foundation
import PostgresNIO
import SecurePushCore
import SecurePushFakes
import SecurePushPostgres
import SecurePushStore
import SecurePushTestSupport
import Testing

/// The `securepush` binary's commands, run as child processes against a test database.
@Suite("Commands")
struct CommandTests {
    /// Runs the binary with `arguments` at log level `info` unless `environment` says otherwise, bounded by
    /// `timeout` (then killed, and the test fails).
    static func run(_ arguments: [String], environment: [String: String], timeout: Duration = .seconds(60)) async throws -> CommandRun {
        try await runSecurepush(arguments, environment: ["SECUREPUSH_LOG_LEVEL": "info"].merging(environment) { $1 }, timeout: timeout)
    }

    /// `securepush serve` against `url` with a user-token secret and a free port no other test was handed, plus `extra`.
    static func serve(_ url: String, _ extra: [String: String] = [:]) async throws -> CommandRun {
        let environment = [
            "DATABASE_URL": url, "SECUREPUSH_PORT": "\(freeTCPPort())", "SECUREPUSH_USER_JWT_SECRET": APIHarness.jwtSecret,
        ]
        return try await run(["serve"], environment: environment.merging(extra) { $1 })
    }

    @Test("serve on an unmigrated database exits non-zero within seconds, says to migrate, and binds no port")
    func serveUnmigrated() async throws {
        try await TestDatabase.with { db in
            try await db.execute("DROP SCHEMA securepush CASCADE")
            let run = try await Self.serve(db.url.urlString)
            #expect(run.status != 0)
            #expect(run.elapsed < .seconds(15))
            #expect(run.output.contains("run `securepush migrate`"), "\(run.output)")
            #expect(!run.output.contains("listening"), "no port was bound: \(run.output)")
            #expect(!run.output.contains("securepush serving"))
            // Nothing was claimed or registered either: no service ran.
            let schema: Bool = try await db.scalar("SELECT to_regnamespace('securepush') IS NOT NULL")
            #expect(!schema, "serve did not create or migrate anything")
        }
    }

    @Test("serve on a port another process listens on exits at once, naming the address and its settings, before any service starts")
    func servePortTaken() async throws {
        let holder = try await FakeWebPushServer.start()
        try await withShutdown(of: holder) {
            try await TestDatabase.with { db in
                let run = try await Self.serve(db.url.urlString, ["SECUREPUSH_PORT": "\(holder.server.port)"])
                #expect(run.status != 0)
                #expect(run.elapsed < .seconds(10))
                #expect(
                    run.output.contains("cannot listen on 127.0.0.1:\(holder.server.port) (SECUREPUSH_HOST, SECUREPUSH_PORT): the address is in use"),
                    "\(run.output)")
                #expect(!run.output.contains("errno"), "no raw bind error: \(run.output)")
                #expect(!run.output.localizedCaseInsensitiveContains("warning"), "no service started, so none warned on its way down: \(run.output)")
            }
        }
    }

    @Test("serve against a database that does not exist exits non-zero within seconds with a clear message")
    func serveMissingDatabase() async throws {
        try await TestDatabase.with { db in
            var url = db.url
            url.database = "sp_missing_\(UUID().uuidString.prefix(8).lowercased())"
            let run = try await Self.serve(url.urlString)
            #expect(run.status != 0)
            #expect(run.elapsed < .seconds(15))
            #expect(run.output.contains("3D000"), "the SQLSTATE is named: \(run.output)")
            #expect(run.output.contains("the database named in DATABASE_URL does not exist"), "and what to check: \(run.output)")
            #expect(run.output.contains("securepush migrate"))
            #expect(!run.output.contains("listening"))
        }
    }

    @Test("serve with no push provider for its dispatcher is a start-up error, not an API that goes down later")
    func serveWithoutProvider() async throws {
        try await TestDatabase.with { db in
            let run = try await Self.serve(db.url.urlString, ["SECUREPUSH_PROVIDERS": ""])
            #expect(run.status != 0)
            #expect(run.output.contains("SECUREPUSH_PROVIDERS lists no push platform"), "\(run.output)")
            #expect(!run.output.contains("listening"))
        }
    }

    @Test("serve with a provider that cannot start names the setting and binds no port")
    func serveWithBrokenProvider() async throws {
        try await TestDatabase.with { db in
            let run = try await Self.serve(
                db.url.urlString, ["SECUREPUSH_PROVIDERS": "fcm", "SECUREPUSH_FCM_SERVICE_ACCOUNT_FILE": "/nonexistent/account.json"])
            #expect(run.status != 0)
            #expect(run.output.contains("SECUREPUSH_FCM_SERVICE_ACCOUNT_FILE"), "\(run.output)")
            #expect(!run.output.contains("listening"))
        }
    }

    @Test("migrate applies every file once, then reports the schema up to date; status prints the report")
    func migrateAndStatus() async throws {
        try await TestDatabase.with { db in
            try await db.execute("DROP SCHEMA securepush CASCADE")
            // Provider settings are not read by migrate or status: an unconfigured APNs must not stop them.
            let environment = ["DATABASE_URL": db.url.urlString, "SECUREPUSH_PROVIDERS": "apns", "SECUREPUSH_DEFAULT_TTL": "3d"]
            let first = try await Self.run(["migrate"], environment: environment)
            #expect(first.status == 0, "\(first.output)")
            let bundled = try Migration.bundled()
            let last = try #require(bundled.last?.name)
            #expect(first.output.contains("securepush: applied \(bundled.count) migrations, 001_core_schema.sql to \(last)\n"), "\(first.output)")
            let second = try await Self.run(["migrate"], environment: environment)
            #expect(second.status == 0)
            #expect(second.output.contains("securepush: schema is up to date"), "\(second.output)")
            let ttl: Bool = try await db.scalar("SELECT value::interval = interval '3 days' FROM securepush.settings WHERE key = 'default_ttl'")
            #expect(ttl, "migrate wrote SECUREPUSH_DEFAULT_TTL")

            try await db.insertDevice(user: "cmd", token: "cmd-1")
            _ = try await db.enqueue(user: "cmd", payload: #"{"secret":"STATUS-PAYLOAD"}"#)
            let json = try await Self.run(["status", "--json"], environment: environment)
            #expect(json.status == 0, "\(json.output)")
            #expect(!json.output.contains("STATUS-PAYLOAD"))
            let start = try #require(json.output.firstIndex(of: "{"))
            let report = try #require(try JSONSerialization.jsonObject(with: Data(json.output[start...].utf8)) as? [String: Any])
            let queue = try #require(report["queue"] as? [String: Any])
            #expect(queue["awaiting_fan_out"] as? Int == 1 && queue["pending"] as? Int == 0, "no dispatcher has fanned it out")
            let database = try #require(report["database"] as? [String: Any])
            #expect(database["reachable"] as? Bool == true)
            #expect((database["migrations_pending"] as? [String])?.isEmpty == true)
            let table = try await Self.run(["status"], environment: environment)
            #expect(table.status == 0)
            #expect(table.output.contains("schema up to date"), "\(table.output)")
            #expect(table.output.contains("1 awaiting fan-out, 0 pending"), "\(table.output)")
            #expect(table.output.contains("circuits      all closed"), "\(table.output)")
            #expect(table.output.contains("outcomes      last hour, per platform"), "\(table.output)")

            // A dispatcher whose APNs breaker is open: the table and the JSON show it.
            let identity = DispatcherIdentity(id: UUID(), host: "worker-1", pid: 42, role: "dispatcher", version: "test")
            try await PostgresDispatcherRegistry(client: db.client, logger: db.logger).heartbeat(
                identity, sent: 0, failed: 0,
                circuits: [CircuitSnapshot(platform: "apns", host: nil, state: .open, openUntil: Date().addingTimeInterval(30))])
            let open = try await Self.run(["status"], environment: environment)
            #expect(open.output.contains("circuits      1 open or half-open"), "\(open.output)")
            #expect(open.output.contains("circuit apns open for "), "\(open.output)")
            #expect(open.output.contains("dispatcher \(identity.id.uuidString.lowercased())"), "\(open.output)")
            let openJSON = try await Self.run(["status", "--json"], environment: environment)
            let openStart = try #require(openJSON.output.firstIndex(of: "{"))
            let openReport = try #require(try JSONSerialization.jsonObject(with: Data(openJSON.output[openStart...].utf8)) as? [String: Any])
            let circuits = try #require(openReport["open_circuits"] as? [[String: Any]])
            #expect(circuits.count == 1)
            #expect(circuits.first?["platform"] as? String == "apns" && circuits.first?["state"] as? String == "open")
        }
    }
}
