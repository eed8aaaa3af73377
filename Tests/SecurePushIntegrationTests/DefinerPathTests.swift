import Foundation
import Logging
import PostgresNIO
import SecurePushPostgres
import SecurePushServer
import SecurePushStore
import SecurePushTestSupport
import Testing

/// Issue 45, item 2: a producer login cannot run code as the schema owner, whatever role migrates and wherever
/// `CREATE` is granted. Each test runs on a database shaped like a PostgreSQL 14 cluster (`public` grants
/// CREATE to PUBLIC) migrated by a role with no schema of its own name, so that pgcrypto first lands in
/// `public`, as it did in the independent reproduction.
@Suite("Definer code cannot be shadowed", .serialized)
struct DefinerPathTests {
    /// A login role of this test (dropped afterwards with what it owns).
    struct Login: Sendable {
        var name: String
        var url: DatabaseURL
    }

    /// Runs `body` with an empty database whose `public` grants CREATE to PUBLIC, owned by a new login with no
    /// schema of its name (the migrating role), and a producer login granted only `securepush_producer`.
    static func withPublicWritable(
        _ body: @Sendable (TestDatabase, _ owner: Login, _ producer: Login) async throws -> Void
    ) async throws {
        try await TestDatabase.withEmpty { db in
            let suffix = UUID().uuidString.prefix(8).lowercased()
            let owner = Login(name: "sp_owner_\(suffix)", url: db.url)
            let producer = Login(name: "sp_mallory_\(suffix)", url: db.url)
            try await db.execute("CREATE ROLE \(unescaped: owner.name) LOGIN")
            try await db.execute("ALTER DATABASE \(unescaped: db.url.database) OWNER TO \(unescaped: owner.name)")
            try await db.execute("GRANT CREATE ON SCHEMA public TO PUBLIC")
            for role in ["securepush_producer", "securepush_operator"] {
                try await db.execute(
                    "DO $$ BEGIN CREATE ROLE \(unescaped: role) NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$")
            }
            try await db.execute("CREATE ROLE \(unescaped: producer.name) LOGIN IN ROLE securepush_producer")
            var ownerURL = db.url
            ownerURL.username = owner.name
            var producerURL = db.url
            producerURL.username = producer.name
            let result: Result<Void, any Error>
            do {
                try await body(db, Login(name: owner.name, url: ownerURL), Login(name: producer.name, url: producerURL))
                result = .success(())
            } catch {
                result = .failure(error)
            }
            try await db.execute("ALTER DATABASE \(unescaped: db.url.database) OWNER TO CURRENT_USER")
            for role in [producer.name, owner.name] {
                try await db.execute("REASSIGN OWNED BY \(unescaped: role) TO CURRENT_USER")
                try await db.execute("DROP OWNED BY \(unescaped: role)")
                try await db.execute("DROP ROLE \(unescaped: role)")
            }
            try result.get()
        }
    }

    /// Runs `body` with a client logged in as `login`.
    static func connected(_ login: Login, _ logger: Logger, _ body: @Sendable (PostgresClient) async throws -> Void) async throws {
        let client = login.url.makeClient(poolSize: 2, logger: logger)
        try await TestDatabase.withRunning(client) { try await body(client) }.get()
    }

    /// Migrates as `login`.
    static func migrate(_ login: Login, _ logger: Logger) async throws {
        try await connected(login, logger) { client in
            _ = try await Migrator.securePush(try Migration.bundled()).migrate(client: client, logger: logger)
        }
    }

    /// Functions named like the built-ins and pgcrypto functions the definer code calls, each recording who ran
    /// it before doing the real work, planted in `public` by the producer login.
    static let planted = """
        CREATE TABLE public.stolen (who text, what text);
        GRANT INSERT ON public.stolen TO PUBLIC;
        CREATE FUNCTION public.convert_to(t text, e text) RETURNS bytea LANGUAGE sql AS $$
            INSERT INTO public.stolen SELECT current_user, 'convert_to ' || t; SELECT pg_catalog.convert_to(t, e::name) $$;
        CREATE FUNCTION public.hmac(d bytea, k bytea, a text) RETURNS bytea LANGUAGE sql AS $$
            INSERT INTO public.stolen SELECT current_user, 'hmac'; SELECT pg_catalog.sha256(d) $$;
        CREATE FUNCTION public.encode(d bytea, f text) RETURNS text LANGUAGE sql AS $$
            INSERT INTO public.stolen SELECT current_user, 'encode'; SELECT pg_catalog.encode(d, f) $$;
        CREATE FUNCTION public.left(t text, n bigint) RETURNS text LANGUAGE sql AS $$
            INSERT INTO public.stolen SELECT current_user, 'left'; SELECT pg_catalog.left(t, n::integer) $$;
        CREATE FUNCTION public.chr(n bigint) RETURNS text LANGUAGE sql AS $$
            INSERT INTO public.stolen SELECT current_user, 'chr'; SELECT pg_catalog.chr(n::integer) $$;
        CREATE FUNCTION public.gen_random_bytes(n bigint) RETURNS bytea LANGUAGE sql AS $$
            INSERT INTO public.stolen SELECT current_user, 'gen_random_bytes'; SELECT '\\x00'::bytea $$;
        CREATE FUNCTION public.now() RETURNS timestamptz LANGUAGE sql AS $$
            INSERT INTO public.stolen SELECT current_user, 'now'; SELECT pg_catalog.now() $$;
        """

    @Test("a producer's functions named like convert_to, hmac, encode, left, chr and now never run as the owner; collapse digests still work")
    func plantedFunctionsNeverRun() async throws {
        try await Self.withPublicWritable { db, owner, producer in
            try await Self.migrate(owner, db.logger)
            let crypto: String = try await db.scalar(
                "SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pgcrypto'")
            #expect(crypto == "securepush", "pgcrypto moved out of the writable public into securepush")
            let paths: [String] = try await db.client.query(
                """
                SELECT DISTINCT c FROM pg_proc p, unnest(p.proconfig) c
                WHERE p.pronamespace = 'securepush'::regnamespace AND c LIKE 'search_path=%'
                """, logger: db.logger
            ).collect().map { try $0.decode(String.self) }
            #expect(!paths.isEmpty && paths.allSatisfy { !$0.contains("public") }, "no fixed path names public: \(paths)")

            try await db.insertDevice(user: "victim", token: "victims-phone-token")
            try await Self.connected(producer, db.logger) { client in
                for statement in Self.planted.components(separatedBy: ";\n") where !statement.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
                {
                    do {
                        _ = try await client.query(PostgresQuery(unsafeSQL: statement), logger: db.logger).collect()
                    } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42723" {
                        // pgcrypto's own function of that signature is already there (where it sits in public).
                    }
                }
                _ = try await client.query(
                    #"SELECT securepush.enqueue('victim', '{"secret": "victim-payload"}', collapse_key => 'k')"#, logger: db.logger
                ).collect()
                _ = try await client.query(
                    #"INSERT INTO securepush.notifications (user_id, payload, collapse_key) VALUES ('victim', '{"n": 2}', 'k2')"#,
                    logger: db.logger
                ).collect()
            }
            // The fan-out runs in a dispatcher's claim, as the owner, in a session whose path has public.
            try await Self.connected(owner, db.logger) { client in
                _ = try await client.query(
                    "SELECT count(*) FROM securepush.claim_deliveries(10, '{fcm}', 30000, gen_random_uuid(), gen_random_uuid(), true, 999)",
                    logger: db.logger
                ).collect()
            }
            let stolen: [String] = try await db.client.query("SELECT who || ': ' || what FROM public.stolen", logger: db.logger)
                .collect().map { try $0.decode(String.self) }
            #expect(stolen.isEmpty, "a planted function ran inside SecurePush's code: \(stolen)")
            let digests: [String] = try await db.client.query(
                "SELECT collapse_id FROM securepush.deliveries WHERE collapse_id IS NOT NULL ORDER BY collapse_id", logger: db.logger
            ).collect().map { try $0.decode(String.self) }
            let expected: [String] = try await db.client.query(
                "SELECT securepush.collapse_digest('victim', k) FROM unnest(ARRAY['k', 'k2']) k ORDER BY 1", logger: db.logger
            ).collect().map { try $0.decode(String.self) }
            #expect(digests.count == 2 && digests == expected && digests.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) })
            // A device's secret comes from pgcrypto (securepush.gen_random_bytes), also in the owner's own session.
            try await Self.connected(owner, db.logger) { client in
                _ = try await client.query(
                    "SELECT * FROM securepush.register_device_checked('victim', 'simulated', 'second-phone')", logger: db.logger
                )
                .collect()
            }
            let stolenAfter: Int64 = try await db.scalar("SELECT count(*)::bigint FROM public.stolen")
            #expect(stolenAfter == 0)
        }
    }

    @Test("routine files, generated migrations and the head agree when a role with no schema of its name migrates")
    func routinesMatchHead() async throws {
        try await Self.withPublicWritable { db, owner, _ in
            try await Self.migrate(owner, db.logger)
            let head = try await RoutineFilesTests.definitions("securepush", db)
            let files = try RoutineFilesTests.wings[0].files()
            try await Self.connected(owner, db.logger) { client in
                try await client.withConnection { connection in
                    _ = try await connection.query(
                        "CREATE FUNCTION pg_temp.run_routine(script text) RETURNS void LANGUAGE plpgsql AS $fn$ BEGIN EXECUTE script; END $fn$",
                        logger: db.logger)
                    for name in files.keys.sorted() {
                        _ = try await connection.query("SELECT pg_temp.run_routine(\(files[name]!))", logger: db.logger).collect()
                    }
                }
            }
            let applied = try await RoutineFilesTests.definitions("securepush", db)
            #expect(Set(applied.symmetricDifference(head).map(\.name)).isEmpty)
        }
    }

    @Test("migrate refuses, saying what to run, when a schema on a definer path grants CREATE or pgcrypto cannot be moved")
    func refusals() async throws {
        try await Self.withPublicWritable { db, owner, _ in
            try await Self.migrate(owner, db.logger)
            try await db.execute("GRANT CREATE ON SCHEMA securepush TO PUBLIC")
            let error = await #expect(throws: MigrationError.self) { try await Self.migrate(owner, db.logger) }
            #expect(error?.message.contains("REVOKE CREATE ON SCHEMA securepush FROM PUBLIC") == true, "\(String(describing: error))")
            try await db.execute("REVOKE CREATE ON SCHEMA securepush FROM PUBLIC")
            try await Self.migrate(owner, db.logger)
        }
        try await Self.withPublicWritable { db, owner, _ in
            // A superuser installed pgcrypto in public before SecurePush came: the owner may not move it.
            try await db.execute("CREATE EXTENSION pgcrypto WITH SCHEMA public")
            let error = await #expect(throws: MigrationError.self) { try await Self.migrate(owner, db.logger) }
            #expect(error?.message.contains("ALTER EXTENSION pgcrypto SET SCHEMA securepush") == true, "\(String(describing: error))")
            // (The refusal came after the migrator made its schema and bookkeeping table, as on any first run.)
            try await db.execute("ALTER EXTENSION pgcrypto SET SCHEMA securepush")
            try await Self.migrate(owner, db.logger)
        }
    }
}
