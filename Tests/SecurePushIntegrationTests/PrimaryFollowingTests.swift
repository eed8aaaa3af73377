import AsyncHTTPClient
import Foundation
import Logging
import PostgresNIO
import SecurePushPostgres
import SecurePushServer
import SecurePushStore
import SecurePushTestSupport
import Testing

/// The primary router and the start-up gate against a real PostgreSQL: a dead host is walked past, and a
/// database that turns read-only (`default_transaction_read_only`, what a demoted primary looks like to
/// a session) is left, with 503s meanwhile, and rejoined when it is writable again. The failover matrix
/// (`ops/failover`) does the same against a real Patroni cluster.
@Suite("Following the writable primary")
struct PrimaryFollowingTests {
    /// A port nothing listens on.
    static func deadPort() -> Int {
        Int.random(in: 1025...1900)
    }

    @Test("a multi-host URL whose first host is dead: the router and the LISTEN connection reach the second")
    func walksPastDeadHost() async throws {
        try await TestDatabase.with { db in
            var url = db.url
            url.endpoints = [.init(host: "127.0.0.1", port: Self.deadPort()), url.endpoints[0]]
            let router = url.makeRouter(poolSize: 2, logger: db.logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await router.run() }
                defer { group.cancelAll() }
                try await router.waitForPrimary(timeout: .seconds(20))
                #expect(router.snapshot.primary == db.url.endpoints[0])
                let rows = try await router.run("SELECT 1::int", logger: db.logger).collect()
                #expect(try rows.first?.decode(Int.self) == 1)
            }
        }
    }

    @Test("serve refuses a read-only node by name, not by telling the operator to migrate")
    func startupNamesReadOnly() async throws {
        try await TestDatabase.with { db in
            try await db.execute("ALTER DATABASE \(unescaped: db.url.database) SET default_transaction_read_only = on")
            let run = try await runSecurepush(
                ["serve", "--role", "api"],
                environment: ["DATABASE_URL": db.url.urlString, "SECUREPUSH_USER_JWT_SECRET": APIHarness.jwtSecret, "SECUREPUSH_PORT": "0"])
            #expect(run.status != 0)
            #expect(run.output.contains("read-only"), "\(run.output.suffix(400))")
            #expect(!run.output.contains("run `securepush migrate`"), "a read-only node is not an unmigrated database")
        }
    }

    @Test("the database turns read-only under a running API: /readyz and reads answer 503 (never 500), then 200 once it is writable")
    func leavesReadOnlyNode() async throws {
        try await TestDatabase.with { db in
            let device = try await db.insertDevice(user: "ro", token: "ro-1")
            _ = device
            // The API's sessions carry an application_name, so the test cuts only them.
            let url = db.url.urlString + "&application_name=securepush-api"
            try await withServedAPI(db, environment: ["DATABASE_URL": url]) { port in
                try await eventually("ready", timeout: .seconds(30)) { (try? await DispatcherOperationsTests.get(port, "/readyz"))?.status == 200 }
                // What a demoted primary looks like: new sessions are read-only, old ones are cut.
                try await db.execute("ALTER DATABASE \(unescaped: db.url.database) SET default_transaction_read_only = on")
                try await db.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = \(db.url.database) AND application_name = 'securepush-api'"
                )
                // Right after the cut, /readyz may first say the database is unreachable (its own session was
                // among those cut); it must come to name the read-only node.
                try await eventually("/readyz answers 503 naming the read-only node", timeout: .seconds(20)) {
                    guard let ready = try? await DispatcherOperationsTests.get(port, "/readyz"), ready.status == 503 else { return false }
                    return ready.body.contains("read-only") || ready.body.contains("writable primary")
                }
                let ready = try await DispatcherOperationsTests.get(port, "/readyz")
                #expect(ready.body.contains("read-only") || ready.body.contains("writable primary"), "\(ready.body)")
                for _ in 0..<5 {
                    let read = try await DispatcherOperationsTests.get(port, "/v1/notifications")
                    #expect(read.status != 500)
                }
                try await db.execute("ALTER DATABASE \(unescaped: db.url.database) SET default_transaction_read_only = off")
                try await eventually("/readyz answers 200 again", timeout: .seconds(20)) {
                    (try? await DispatcherOperationsTests.get(port, "/readyz"))?.status == 200
                }
            }
        }
    }
}

@Suite("The replication gate")
struct ReplicationGateTests {
    @Test("without synchronous standbys configured the gate opens at once; with the gate off the queue does not ask")
    func singleNode() async throws {
        try await TestDatabase.with { db in
            let started = ContinuousClock.now
            let open: Bool = try await db.scalar("SELECT securepush.await_sync_replication(5000)")
            #expect(open)
            #expect(ContinuousClock.now - started < .seconds(2), "no wait when nothing is configured")
            let gated = PostgresDeliveryQueue(client: db.client, logger: db.logger, replicationGate: true)
            #expect(try await gated.awaitReplication(timeout: .seconds(1)))
            let ungated = PostgresDeliveryQueue(client: db.client, logger: db.logger)
            #expect(try await ungated.awaitReplication(timeout: .zero))
        }
    }

    @Test("a dispatcher with SECUREPUSH_REPLICATION_GATE=on pushes (the failover matrix runs it against synchronous standbys)")
    func dispatcherWithGate() async throws {
        try await TestDatabase.with { db in
            let outbox = FileManager.default.temporaryDirectory.appendingPathComponent("securepush-gate-\(UUID()).jsonl")
            defer { try? FileManager.default.removeItem(at: outbox) }
            let environment = [
                "SECUREPUSH_PROVIDERS": "simulated", "SECUREPUSH_SIMULATED_OUTBOX": outbox.path, "SECUREPUSH_REPLICATION_GATE": "on",
            ]
            try await withServedAPI(db, role: "dispatcher", environment: environment) { _ in
                _ = try await db.insertDevice(user: "gate", token: "gate-1")
                let id = try await db.enqueue(user: "gate", payload: "{}")
                try await eventually("the push went out through the gate", timeout: .seconds(30)) {
                    (try? String(contentsOf: outbox, encoding: .utf8))?.contains(id.uuidString.lowercased()) == true
                }
            }
        }
    }
}
