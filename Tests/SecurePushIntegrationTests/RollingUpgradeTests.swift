import AsyncHTTPClient
import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import PostgresNIO
import SecurePushCore
import SecurePushPostgres
import SecurePushStore
import SecurePushTestSupport
import Testing

/// The compatibility rule of rolling upgrades and rollbacks (issue 37, docs/operations.md § Upgrading): a
/// migration says the oldest build that may run on it; this build keeps starting and serving on a newer
/// schema whose unknown migrations allow it, refuses one that does not, and serves with no failed request
/// while a migration is applied and its processes restart one at a time.
@Suite("Rolling upgrades")
struct RollingUpgradeTests {
    /// Records a migration this build does not know, as a newer release's migrator would.
    static func recordFuture(_ db: TestDatabase, version: Int, oldestBuild: String?) async throws {
        // This build's migrator keeps the column (a database last migrated before it has none yet).
        try await Migrator.securePush(try Migration.bundled()).migrate(client: db.client, logger: db.logger)
        try await db.execute(
            """
            INSERT INTO securepush.schema_migrations (version, name, checksum, oldest_build)
            VALUES (\(version), \("\(version)_future.sql"), 'future-checksum', \(oldestBuild))
            """)
    }

    @Test("a newer schema is served when its unknown migrations allow this build, refused with the reason when they do not")
    func startsOnlyWhereAllowed() async throws {
        try await TestDatabase.with { db in
            try await Self.recordFuture(db, version: 900, oldestBuild: SecurePushVersion.current)
            let migrator = Migrator.securePush(try Migration.bundled())
            #expect(try await migrator.pending(client: db.client, logger: db.logger).isEmpty)
            try await withServedAPI(db, role: "all") { port in
                try await eventually("ready on the newer schema", timeout: .seconds(30)) {
                    (try? await DispatcherOperationsTests.get(port, "/readyz"))?.status == 200
                }
            }
            try await Self.recordFuture(db, version: 901, oldestBuild: "99.0.0")
            await #expect(throws: MigrationError.self) { _ = try await migrator.pending(client: db.client, logger: db.logger) }
            let refused = try await runSecurepush(["migrate"], environment: ["DATABASE_URL": db.url.urlString])
            #expect(refused.status != 0)
            #expect(refused.output.contains("901_future.sql") && refused.output.contains("builds from 99.0.0 on"), "\(refused.output.suffix(400))")
            try await db.execute("UPDATE securepush.schema_migrations SET oldest_build = NULL WHERE version = 901")
            let unmarked = try await runSecurepush(["migrate"], environment: ["DATABASE_URL": db.url.urlString])
            #expect(unmarked.status != 0 && unmarked.output.contains("only builds that know it"), "\(unmarked.output.suffix(400))")
        }
    }

    @Test(
        "each migration that names an oldest build is expand-only (nothing dropped, renamed or retyped that older builds use), unless it is a contract step that drops only functions head's code no longer names; the check catches a contract step"
    )
    func markedMigrationsExpandOnly() throws {
        let marked = try Migration.bundled().filter { $0.oldestBuild != nil }
        #expect(marked.count >= 2, "027 and 028 say which builds they serve")
        let named = try Self.headCode()
        for migration in marked {
            if migration.sql.contains(Self.contractMarker) {
                // A contract step (ops/release-migration --oldest-build): builds before its oldest build no longer
                // start on it, so it may drop what they used, but only functions nothing at head names.
                let oldest = try #require(migration.oldestBuild)
                #expect(SecurePushVersion.precedes(oldest, SecurePushVersion.current), "\(migration.name) names an older build than this one")
                #expect(
                    Self.stillNamed(migration.sql, in: named).isEmpty,
                    "\(migration.name) drops what head names: \(Self.stillNamed(migration.sql, in: named))")
                let other = Self.contractSteps(in: migration.sql).filter { !$0.hasPrefix("DROP FUNCTION") }
                #expect(other.isEmpty, "\(migration.name): a contract step drops functions only: \(other)")
            } else {
                #expect(Self.contractSteps(in: migration.sql).isEmpty, "\(migration.name): \(Self.contractSteps(in: migration.sql))")
            }
        }
        // The contract check itself: dropping a function head still calls is caught; one nothing names, or one a
        // routine file still defines under another signature, is not.
        let drop = "DROP FUNCTION securepush.gone(p integer);"
        #expect(Self.stillNamed(drop, in: "SELECT securepush.gone(1)") == ["securepush.gone"])
        #expect(Self.stillNamed(drop, in: named).isEmpty)
        #expect(Self.stillNamed(drop, in: "CREATE OR REPLACE FUNCTION securepush.gone(p bigint) … SELECT securepush.gone(1)").isEmpty)
        // The check itself: a contract step is caught, a re-creation with the same arguments is not.
        let contract = """
            ALTER TABLE securepush.notifications DROP COLUMN category;
            DROP FUNCTION securepush.enqueue(user_id text, payload jsonb);
            CREATE FUNCTION securepush.enqueue(user_id text, payload jsonb, extra integer) RETURNS uuid LANGUAGE sql AS $$ SELECT NULL::uuid $$;
            """
        #expect(Self.contractSteps(in: contract).count == 2, "\(Self.contractSteps(in: contract))")
        let recreate = """
            DROP FUNCTION securepush.claim(p_limit integer, p_flag boolean);
            CREATE OR REPLACE FUNCTION securepush.claim(p_limit integer, p_flag boolean DEFAULT false) RETURNS integer LANGUAGE sql AS $$ SELECT 1 $$;
            """
        #expect(Self.contractSteps(in: recreate).isEmpty)
        // A column's default may change (031 sets the salt's again); its type may not.
        #expect(Self.contractSteps(in: "ALTER TABLE securepush.collapse_salt ALTER COLUMN salt DROP DEFAULT;").isEmpty)
        #expect(Self.contractSteps(in: "ALTER TABLE securepush.collapse_salt ALTER COLUMN salt TYPE text;") == ["ALTER COLUMN"])
    }

    /// The header line `ops/release-migration` writes on a contract step.
    static let contractMarker = "-- securepush: contract step"

    /// The text of what runs at head and names SQL functions: the Swift sources, the routine files, the ops scripts
    /// and the README (the producers' and operators' calls). Left out: the plan guard's paths, whose branches for
    /// older schemas (`ops/plan-guard --to NNN`) call what those schemas had.
    static func headCode() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var text = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        for folder in ["Sources", "Tools", "sql/routines", "ops"] {
            let files = FileManager.default.enumerator(at: root.appendingPathComponent(folder), includingPropertiesForKeys: nil)
            while let file = files?.nextObject() as? URL {
                guard ["swift", "sql", ""].contains(file.pathExtension) || folder == "ops", !file.hasDirectoryPath,
                    !file.path.hasSuffix("ops/plan-guard.d/paths.sql")
                else { continue }
                text += (try? String(contentsOf: file, encoding: .utf8)) ?? ""
            }
        }
        return text
    }

    /// The functions `sql` drops whose names `code` still calls (`schema.name(`), leaving out names a routine
    /// file still defines under another signature (a text check cannot tell which signature a call means).
    static func stillNamed(_ sql: String, in code: String) -> [String] {
        matches(#"DROP FUNCTION ([a-z_]+\.[a-z_]+)\("#, in: sql).map { $0[1] }.filter { name in
            let defined = code.contains("CREATE OR REPLACE FUNCTION \(name)(")
            return !defined && code.contains("\(name)(")
        }
    }

    /// What in `sql` would break a build that ran before it (empty: expand-only).
    static func contractSteps(in sql: String) -> [String] {
        var steps = ["DROP TABLE", "DROP COLUMN", "DROP VIEW", "RENAME ", "DROP TYPE", "DROP SCHEMA"].filter {
            sql.uppercased().contains($0)
        }
        // A column's type or nullability changes what older builds read and write; its default does not.
        let alterColumns = matches(#"(?i)ALTER COLUMN"#, in: sql).count
        let defaultsOnly = matches(#"(?i)ALTER COLUMN [a-z_]+ (?:SET|DROP) DEFAULT"#, in: sql).count
        if alterColumns > defaultsOnly { steps.append("ALTER COLUMN") }
        for drop in matches(#"DROP FUNCTION ([a-z_.]+)\(([^)]*)\)"#, in: sql) {
            let arguments = argumentTypes(drop[2])
            let pattern = #"CREATE (?:OR REPLACE )?FUNCTION "# + NSRegularExpression.escapedPattern(for: drop[1]) + #"\(([^)]*)\)"#
            if !matches(pattern, in: sql).contains(where: { argumentTypes($0[1]) == arguments }) {
                steps.append("DROP FUNCTION \(drop[1])(\(drop[2])) without the same arguments again")
            }
        }
        return steps
    }

    /// The argument types of a function's argument list (names and defaults left out).
    static func argumentTypes(_ list: String) -> [String] {
        list.split(separator: ",").map { argument in
            let words = argument.split(separator: " ").map(String.init)
            let typeWords = words.dropFirst().prefix { $0.uppercased() != "DEFAULT" }
            return typeWords.joined(separator: " ")
        }
    }

    static func matches(_ pattern: String, in text: String) -> [[String]] {
        guard let expression = try? NSRegularExpression(pattern: pattern) else { return [] }
        let range = NSRange(text.startIndex..., in: text)
        return expression.matches(in: text, range: range).map { match in
            (0..<match.numberOfRanges).map { Range(match.range(at: $0), in: text).map { String(text[$0]) } ?? "" }
        }
    }

    @Test("older builds' SQL calls work on head's schema with data in flight: 0.1.0's claim and batch fetch, which head keeps")
    func previousReleaseCallsWork() async throws {
        try await TestDatabase.with { db in
            let rows = try await db.client.query(
                """
                SELECT device_id, device_secret FROM securepush.register_device(user_id => 'pat', platform => 'simulated', token => 'pat-1')
                """, logger: db.logger
            ).collect()
            let (device, secret) = try #require(rows.first).decode((UUID, String).self)
            let hash = [UInt8](SHA256.hash(data: try #require(Data(base64URLEncoded: secret))))
            var ids: [UUID] = []
            for _ in 0..<3 { ids.append(try await db.enqueue(user: "pat", payload: #"{"n":1}"#)) }
            // Not fanned out yet (033): the claim an older build calls fans them out first.
            let queued: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.fan_out_queue")
            #expect(queued == 3)
            // 0.1.0's claim: eight arguments, the columns it reads by name.
            let claimed = try await db.client.query(
                "SELECT * FROM securepush.claim_deliveries(10, ARRAY['simulated'], 60000, gen_random_uuid(), gen_random_uuid(), true, 999)",
                logger: db.logger
            ).collect()
            #expect(claimed.count == 3)
            let left: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.fan_out_queue")
            #expect(left == 0, "fanned out by the older build's claim")
            let columns = Set(claimed[0].makeRandomAccess().map(\.columnName))
            for column in [
                "id", "notification_id", "device_id", "platform", "token", "options", "active", "expires_at", "priority", "attempts",
                "unread", "clear_ids", "urgency", "collapse_id", "preview", "seal_public", "seal_auth", "user_id",
            ] {
                #expect(columns.contains(column), "0.1.0's claim reads \(column)")
            }
            // 0.1.0's batch fetch: its session row first (id NULL), then one row per id.
            let fetched = try await db.client.query(
                """
                SELECT req, user_id, id, live, payload FROM securepush.device_fetch_batch(ARRAY[\(device)]::uuid[], ARRAY[\(ByteBuffer(bytes: hash))]::bytea[],
                    ARRAY['ip:127.0.0.1'], ARRAY[1], ARRAY[1, 1], ARRAY[\(ids[0]), \(ids[1])]::uuid[])
                """, logger: db.logger
            ).collect()
            let decoded = try fetched.map { try $0.decode((Int32, String?, UUID?, Bool?, String?).self) }
            #expect(decoded.contains { $0.2 == nil && $0.1 == "pat" }, "the session row")
            #expect(decoded.filter { $0.3 == true && $0.4 != nil }.count == 2, "both payloads")
        }
    }

    @Test("a rolling upgrade: the migration applied while two processes serve, then each restarted in turn; no request fails")
    func rollingUpgradeLosesNoRequest() async throws {
        try await TestDatabase.with { db in
            let rows = try await db.client.query(
                "SELECT device_id, device_secret FROM securepush.register_device(user_id => 'rue', platform => 'simulated', token => 'rue-1')",
                logger: db.logger
            ).collect()
            let (device, secret) = try #require(rows.first).decode((UUID, String).self)
            let id = try await db.enqueue(user: "rue", payload: #"{"n":1}"#)
            let servers = [RestartableServer(db: db), RestartableServer(db: db)]
            for server in servers { try server.start() }
            defer { for server in servers { server.stop() } }
            for server in servers { try await server.waitReady() }
            let failures = NIOLockedValueBox<[String]>([])
            let served = NIOLockedValueBox(0)
            let running = NIOLockedValueBox(true)
            // The client is a load balancer: it sends each request to the next server whose /readyz answers 200.
            let client = Task {
                var turn = 0
                while running.withLockedValue({ $0 }) {
                    turn += 1
                    let server = servers[turn % 2]
                    guard await server.isReady() else { continue }
                    var request = HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/v1/notifications/\(id)")
                    request.headers.add(name: "Authorization", value: "Bearer \(device.uuidString.lowercased()).\(secret)")
                    do {
                        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(5))
                        _ = try await response.body.collect(upTo: 1 << 16)
                        if response.status == .ok {
                            served.withLockedValue { $0 += 1 }
                        } else {
                            failures.withLockedValue { $0.append("HTTP \(response.status.code)") }
                        }
                    } catch {
                        // A server that stopped between its readiness answer and the request is the balancer's retry.
                        if await server.isReady() { failures.withLockedValue { $0.append("\(type(of: error))") } }
                    }
                }
            }
            try await eventually("requests flow", timeout: .seconds(10)) { served.withLockedValue { $0 } > 20 }
            // The next release's expand-only migration, applied while both serve.
            try await db.execute("ALTER TABLE securepush.notifications ADD COLUMN future_note text")
            try await Self.recordFuture(db, version: 902, oldestBuild: SecurePushVersion.current)
            // Each process restarts in turn (as a rolling update replaces pods); the restarted one is the
            // older build on the newer schema, which its migration allows.
            for server in servers {
                let before = served.withLockedValue { $0 }
                server.stop()
                try server.start()
                try await server.waitReady()
                try await eventually("requests flow again", timeout: .seconds(10)) { served.withLockedValue { $0 } > before + 20 }
            }
            running.withLockedValue { $0 = false }
            await client.value
            let failed = failures.withLockedValue { $0 }
            #expect(failed.isEmpty, "failed requests during the rolling upgrade: \(failed)")
            print("rolling upgrade: \(served.withLockedValue { $0 }) requests served, \(failed.count) failed")
        }
    }

    @Test("0.3.7's own release and rescue statements on 046's leases: they touch no lease item, and a claim rescues it once its lease ends")
    func olderReleaseAndRescueOnLeases() async throws {
        try await TestDatabase.with { db in
            try await db.insertDevice(user: "lr", token: "lr-1")
            _ = try await db.enqueue(user: "lr", payload: #"{"n":1}"#)
            let token = UUID()
            let claimed = try await db.client.query(
                "SELECT id FROM securepush.claim_deliveries(10, ARRAY['simulated'], 300, \(token), gen_random_uuid(), false, 999, false)",
                logger: db.logger
            ).collect().map { try $0.decode(UUID.self) }
            #expect(claimed.count == 1)
            // 0.3.7's release (PostgresDeliveryQueue.release) and rescue (PostgresQueueMaintenance), as they were.
            let released: Int64 = try await db.scalar(
                """
                WITH released AS (
                    UPDATE securepush.deliveries
                    SET state = 'pending', attempts = greatest(attempts - 1, 0), lease_token = NULL, lease_expires_at = NULL, claimed_by = NULL,
                        run_at = CASE WHEN 0::bigint > 0 THEN greatest(run_at, now()) ELSE run_at END
                    WHERE id = ANY(\(claimed)::uuid[]) AND lease_token = \(token)
                    RETURNING id
                )
                SELECT count(*)::bigint FROM released
                """)
            #expect(released == 0, "an older build's release does not see lease items: they wait for the lease's end")
            try await db.awaitLeasesEnded()
            let rescued: Int64 = try await db.scalar(
                """
                WITH rescued AS (
                    UPDATE securepush.deliveries
                    SET state = 'pending', lease_token = NULL, lease_expires_at = NULL, claimed_by = NULL,
                        last_error = 'lease expired (dispatcher stopped or stalled)'
                    WHERE id = ANY (ARRAY(SELECT id FROM securepush.deliveries WHERE state = 'claimed' AND lease_expires_at < now() FOR UPDATE SKIP LOCKED))
                    RETURNING id
                )
                SELECT count(*)::bigint FROM rescued
                """)
            #expect(rescued == 0)
            // Any build's next claim: the first finds no work and rescues the lease, the second pushes it again.
            for _ in 0..<2 {
                let again = try await db.client.query(
                    "SELECT id, attempts FROM securepush.claim_deliveries(10, ARRAY['simulated'], 60000, gen_random_uuid(), gen_random_uuid(), false, 999, false)",
                    logger: db.logger
                ).collect().map { try $0.decode((UUID, Int32).self) }
                if let first = again.first {
                    #expect(first.0 == claimed[0] && first.1 == 2)
                    return
                }
            }
            Issue.record("the lease's item was not claimed again")
        }
    }
}

/// A `securepush serve --role all` process that can be stopped and started again on the same port.
final class RestartableServer: Sendable {
    let port = freeTCPPort()
    let opsPort = freeTCPPort()
    let db: TestDatabase
    private let process = NIOLockedValueBox<Process?>(nil)

    init(db: TestDatabase) { self.db = db }

    func start() throws {
        let process = Process()
        process.executableURL = try securepushExecutable()
        process.arguments = ["serve", "--role", "all"]
        process.environment = [
            "PATH": "/usr/bin:/bin", "DATABASE_URL": db.url.urlString, "SECUREPUSH_PORT": "\(port)", "SECUREPUSH_LOG_LEVEL": "error",
            "SECUREPUSH_USER_JWT_SECRET": APIHarness.jwtSecret, "SECUREPUSH_OPS_HOST": "127.0.0.1", "SECUREPUSH_OPS_PORT": "\(opsPort)",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process.withLockedValue { $0 = process }
    }

    /// SIGTERM (a graceful stop, as an orchestrator sends) and wait for the exit.
    func stop() {
        guard
            let process = self.process.withLockedValue({ current in
                defer { current = nil }; return current
            })
        else { return }
        process.terminate()
        process.waitUntilExit()
    }

    func isReady() async -> Bool {
        guard process.withLockedValue({ $0?.isRunning }) == true else { return false }
        return (try? await DispatcherOperationsTests.get(opsPort, "/readyz"))?.status == 200
    }

    func waitReady() async throws {
        try await eventually("the server is ready", timeout: .seconds(30)) { await self.isReady() }
    }
}
