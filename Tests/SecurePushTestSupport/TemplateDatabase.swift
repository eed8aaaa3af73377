import Crypto
import Foundation
import Logging
import PostgresNIO
import SecurePushPostgres
import SecurePushServer
import SecurePushStore

/// Creates per-test databases: copies of one migrated template, or empty ones.
///
/// The template is named after the migrations' combined checksum (`sp_template_<hash>`), so test runs
/// against the same server reuse it while the migrations stay the same. Making it drops the other
/// `sp_template_%` databases that no session uses, so old templates do not pile up. Processes making
/// templates at once are serialized by an advisory lock; a template is used only once it is marked
/// complete (a comment on the database), so one left half-made by a killed run is made again.
actor TemplateDatabase {
    static let shared = TemplateDatabase()

    /// Advisory lock key held (in the `postgres` database) while a template is checked or made.
    static let lockKey: Int64 = 0x5350_5465_6d70  // "SPTemp"
    /// The comment that marks a template as completely migrated.
    static let completeMarker = "securepush test template: migrated"

    private var template: Task<String, any Error>?
    private let logger = Logger(label: "securepush.test.template")

    private func serverURL() throws -> DatabaseURL {
        guard let raw = ProcessInfo.processInfo.environment["DATABASE_URL"], !raw.isEmpty else {
            throw TestFailure("DATABASE_URL is not set: run the tests with ops/test, which starts a private PostgreSQL")
        }
        return try DatabaseURL(raw)
    }

    /// The template's name for a set of migrations: `sp_template_` and 16 hex digits of their combined checksum.
    static func templateName(for migrations: [Migration]) -> String {
        let combined = migrations.map { "\($0.name) \($0.checksum)\n" }.joined()
        let digest = SHA256.hash(data: Data(combined.utf8)).map { String(format: "%02x", $0) }.joined()
        return "sp_template_" + digest.prefix(16)
    }

    /// A new database: a copy of the migrated template, or with `empty` a copy of `template0` (no schema at all).
    func createDatabase(empty: Bool = false) async throws -> DatabaseURL {
        var source = empty ? "template0" : try await ensureTemplate()
        let name = "sp_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        // The template may still show a closing connection for a moment: retry while it is "being accessed".
        var attempt = 0
        while true {
            do {
                let source = source
                try await admin { client in
                    _ = try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name) TEMPLATE \(source)"), logger: self.logger)
                }
                break
            } catch {
                attempt += 1
                if attempt >= 100 { throw error }
                // Another test process (other migrations) may have dropped our template while no session used it.
                if !empty, !(try await exists(source)) {
                    template = nil
                    source = try await ensureTemplate()
                }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        var url = try serverURL()
        url.database = name
        return url
    }

    func dropDatabase(_ name: String) async throws {
        try await admin { client in
            _ = try await client.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: self.logger)
        }
    }

    private func ensureTemplate() async throws -> String {
        if let template { return try await template.value }
        let task = Task { try await self.makeTemplate() }
        template = task
        return try await task.value
    }

    private func exists(_ database: String) async throws -> Bool {
        try await admin { client in
            try await !client.query("SELECT 1 FROM pg_database WHERE datname = \(database)", logger: self.logger).collect().isEmpty
        }
    }

    private func makeTemplate() async throws -> String {
        let migrations = try Migration.bundled()
        let name = Self.templateName(for: migrations)
        let logger = self.logger
        try await admin { client in
            try await client.withConnection { connection in
                // Session-level: released by the unlock below, or when the connection closes on an error.
                _ = try await connection.query("SELECT pg_advisory_lock(\(Self.lockKey))", logger: logger)
                try await Self.dropUnusedTemplates(except: name, on: connection, logger: logger)
                let rows = try await connection.query(
                    "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = \(name)", logger: logger
                ).collect()
                let marker = try rows.first?.decode(String?.self) ?? nil
                if marker != Self.completeMarker {
                    // Missing, or left half-made by a run that was killed: make it (again).
                    _ = try await connection.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: logger)
                    _ = try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name) TEMPLATE template0"), logger: logger)
                    try await self.migrate(database: name, migrations: migrations)
                    _ = try await connection.query(
                        PostgresQuery(unsafeSQL: "COMMENT ON DATABASE \(name) IS '\(Self.completeMarker)'"), logger: logger)
                }
                _ = try await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger)
            }
        }
        return name
    }

    /// Drops the other `sp_template_%` databases that no session is connected to. One that is in use
    /// (another run's, right now) is left alone, and so is any that cannot be dropped.
    private static func dropUnusedTemplates(except keep: String, on connection: PostgresConnection, logger: Logger) async throws {
        let rows = try await connection.query(
            """
            SELECT d.datname FROM pg_database d
            WHERE d.datname LIKE 'sp\\_template\\_%' AND d.datname <> \(keep)
              AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = d.datname)
            """,
            logger: logger
        )
        var unused: [String] = []
        for try await name in rows.decode(String.self) { unused.append(name) }
        for name in unused {
            _ = try? await connection.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \"\(name)\""), logger: logger)
        }
    }

    private func migrate(database: String, migrations: [Migration]) async throws {
        var url = try serverURL()
        url.database = database
        let client = url.makeClient(poolSize: 2, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            try await Migrator.securePush(migrations).migrate(client: client, logger: self.logger)
        }
    }

    private func admin<T: Sendable>(_ body: @Sendable (PostgresClient) async throws -> T) async throws -> T {
        var url = try serverURL()
        url.database = "postgres"
        let client = url.makeClient(poolSize: 2, logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }
}
