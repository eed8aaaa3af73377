import Foundation
import Logging
import PostgresNIO
import SecurePushCore

/// Applies `sql/` migrations: idempotent, serialized across processes (each migration's transaction locks
/// `schema_migrations`, which no producer may lock; an advisory lock only while the schema is created),
/// recorded in `<schema>.schema_migrations` (`securepush`, or `securepush_relay` for the push relay's own
/// database and `sql/relay/`), refusing to run when an applied file was edited, and refusing a newer schema
/// unless each migration this build does not know allows it (`Migration.oldestBuild`: the compatibility rule
/// of rolling upgrades and rollbacks, docs/operations.md § Upgrading).
public struct Migrator: Sendable {
    /// The advisory lock key SecurePush migrators take while they create the schema ("SecPush" in ASCII).
    static let lockKey: Int64 = 0x5365_6350_7573_68
    /// A step its caller runs after every migrate, on the migrating connection (SecurePush's refreshes its time zones).
    public typealias Hook = @Sendable (_ connection: PostgresConnection, _ logger: Logger) async throws -> Void

    public let migrations: [Migration]
    /// The schema the migrations create and record themselves in.
    public let schema: String
    /// This build's version, compared with the oldest build a newer migration allows.
    public let build: String
    /// Run after every migrate, whether or not it applied anything.
    let afterMigrate: Hook?

    /// Creates a migrator for the given files, recorded in `schema` (a constant of the caller's code, never input);
    /// `afterMigrate` runs after every migrate.
    public init(migrations: [Migration], schema: String, build: String = SecurePushVersion.current, afterMigrate: Hook? = nil) {
        self.migrations = migrations
        self.schema = schema
        self.build = build
        self.afterMigrate = afterMigrate
    }

    /// Applies what is missing; returns the names applied by this call.
    @discardableResult
    public func migrate(client: any DatabaseClient, logger: Logger) async throws -> [String] {
        try await client.leased { connection in
            // Once the schema exists, migrators take turns by locking its schema_migrations table in each
            // migration's transaction, which no producer may lock: a producer login that held the advisory key
            // stopped every migrate (issue 47). The key guards only the schema's creation, before any producer
            // has rights on it.
            let bootstrap = try await !schemaMigrationsExist(on: connection, logger: logger)
            if bootstrap { _ = try await connection.query("SELECT pg_advisory_lock(\(Self.lockKey))", logger: logger) }
            do {
                let applied = try await apply(on: connection, logger: logger)
                if let afterMigrate { try await afterMigrate(connection, logger) }
                if bootstrap { _ = try await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger) }
                return applied
            } catch {
                if bootstrap { _ = try? await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger) }
                throw error
            }
        }
    }

    /// The names of bundled migrations not yet applied (throws if the database disagrees with the files).
    public func pending(client: any DatabaseClient, logger: Logger) async throws -> [String] {
        try await client.leased { connection in try await self.pending(on: connection, logger: logger) }
    }

    /// `pending(client:logger:)` on one connection.
    public func pending(on connection: PostgresConnection, logger: Logger) async throws -> [String] {
        guard try await schemaMigrationsExist(on: connection, logger: logger) else { return migrations.map(\.name) }
        let applied = try await appliedMigrations(on: connection, logger: logger)
        try verify(applied: applied)
        return migrations.filter { applied[$0.version] == nil }.map(\.name)
    }

    private func schemaMigrationsExist(on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        try await connection.query("SELECT to_regclass(\(schema + ".schema_migrations")) IS NOT NULL", logger: logger)
            .collect().first?.decode(Bool.self) ?? false
    }

    private func apply(on connection: PostgresConnection, logger: Logger) async throws -> [String] {
        // The extended protocol runs one statement at a time; a session-local helper runs a whole file.
        _ = try await connection.query(
            """
            CREATE OR REPLACE FUNCTION pg_temp.securepush_run_sql(script text) RETURNS void
            LANGUAGE plpgsql AS $fn$ BEGIN EXECUTE script; END $fn$
            """,
            logger: logger
        )
        _ = try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT pg_temp.securepush_run_sql('
                        CREATE SCHEMA IF NOT EXISTS \(schema);
                        CREATE TABLE IF NOT EXISTS \(schema).schema_migrations (
                            version integer PRIMARY KEY,
                            name text NOT NULL,
                            checksum text NOT NULL,
                            applied_at timestamptz NOT NULL DEFAULT now()
                        );
                        ALTER TABLE \(schema).schema_migrations ADD COLUMN IF NOT EXISTS oldest_build text')
                    """),
            logger: logger
        )
        let applied = try await appliedMigrations(on: connection, logger: logger)
        try verify(applied: applied)
        let definerPaths = DefinerPathGuard(connection: connection, logger: logger)
        if schema == "securepush" {
            try await definerPaths.checkCrypto()
            try await definerPaths.checkPaths()
            try await definerPaths.warnAboutSessionPath()
        }
        var names: [String] = []
        for migration in migrations where applied[migration.version] == nil {
            logger.info("applying migration", metadata: ["migration.name": "\(migration.name)"])
            let done: Bool
            do {
                done = try await connection.inTransaction(logger: logger) {
                    // One migrator at a time; one that waited finds what the other applied.
                    _ = try await connection.query(
                        PostgresQuery(unsafeSQL: "LOCK TABLE \(schema).schema_migrations IN SHARE ROW EXCLUSIVE MODE"), logger: logger)
                    var check = PostgresQuery(unsafeSQL: "SELECT count(*)::bigint FROM \(schema).schema_migrations WHERE version = $1")
                    check.binds.append(migration.version)
                    guard try await connection.query(check, logger: logger).collect().first?.decode(Int64.self) == 0 else { return false }
                    if schema == "securepush" {
                        // pgcrypto may already live in securepush (moved there by migration 031, or by an operator
                        // before the first migrate): released migrations that call it unqualified still find it.
                        _ = try await connection.query(
                            "SELECT pg_catalog.set_config('search_path', pg_catalog.current_setting('search_path') || ', securepush', true)",
                            logger: logger)
                    }
                    _ = try await connection.query("SELECT pg_temp.securepush_run_sql(\(migration.sql))", logger: logger)
                    var record = PostgresQuery(
                        unsafeSQL: "INSERT INTO \(schema).schema_migrations (version, name, checksum, oldest_build) VALUES ($1, $2, $3, $4)")
                    record.binds.append(migration.version)
                    record.binds.append(migration.name)
                    record.binds.append(migration.checksum)
                    record.binds.append(migration.oldestBuild)
                    _ = try await connection.query(record, logger: logger)
                    return true
                }
            } catch {
                // The summary, not the server's text: a failing backfill's message can quote row values.
                throw MigrationError("migration \(migration.name) failed: \(DatabaseErrorSummary(error))")
            }
            if done { names.append(migration.name) }
        }
        if schema == "securepush" { try await definerPaths.checkPaths() }
        return names
    }

    /// An applied migration as `schema_migrations` records it.
    struct Applied {
        var name: String
        var checksum: String
        var oldestBuild: String?
    }

    private func appliedMigrations(on connection: PostgresConnection, logger: Logger) async throws -> [Int: Applied] {
        var applied: [Int: Applied] = [:]
        // A database the migrator has not touched since oldest_build was added has none: select it only when present.
        let hasOldestBuild =
            try await connection.query(
                "SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(\(schema + ".schema_migrations")) AND attname = 'oldest_build')",
                logger: logger
            ).collect().first?.decode(Bool.self) ?? false
        let column = hasOldestBuild ? "oldest_build" : "NULL::text"
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT version, name, checksum, \(column) FROM \(schema).schema_migrations"), logger: logger)
        for try await (version, name, checksum, oldestBuild) in rows.decode((Int, String, String, String?).self) {
            applied[version] = Applied(name: name, checksum: checksum, oldestBuild: oldestBuild)
        }
        return applied
    }

    private func verify(applied: [Int: Applied]) throws {
        let byVersion = Dictionary(uniqueKeysWithValues: migrations.map { ($0.version, $0) })
        for (version, record) in applied.sorted(by: { $0.key < $1.key }) {
            guard let file = byVersion[version] else {
                // A newer schema: this build runs on it only if the migration says builds as old as this one may.
                if let oldest = record.oldestBuild, !SecurePushVersion.precedes(build, oldest) { continue }
                let allows = record.oldestBuild.map { "builds from \($0) on" } ?? "only builds that know it"
                throw MigrationError(
                    "the database has migration \(record.name) applied, which this build (\(build)) does not know and which allows \(allows); refusing to run an older build (deploy a newer one, or restore the database)"
                )
            }
            guard file.checksum == record.checksum else {
                throw MigrationError(
                    "migration \(file.name) was edited after it was applied (checksum differs); add a new migration instead"
                )
            }
        }
    }
}
