import Foundation
import Logging
import PostgresNIO
import SecurePushCore

/// Applies `sql/` migrations: idempotent, serialized across processes by an advisory lock,
/// recorded in `<schema>.schema_migrations` (`securepush`, or `securepush_relay` for the push relay's own
/// database and `sql/relay/`), refusing to run when an applied file was edited.
public struct Migrator: Sendable {
    /// The advisory lock key all SecurePush migrators take ("SecPush" in ASCII).
    static let lockKey: Int64 = 0x5365_6350_7573_68
    /// The migration that made `securepush.time_zones`, refreshed after every migrate from then on.
    static let timeZonesVersion = 22

    public let migrations: [Migration]
    /// The schema the migrations create and record themselves in.
    public let schema: String

    /// Creates a migrator for the given files, recorded in `schema` (a constant of this code, never input).
    public init(migrations: [Migration], schema: String = "securepush") {
        self.migrations = migrations
        self.schema = schema
    }

    /// The push relay's migrator (`sql/relay/`, schema `securepush_relay`).
    public static func relay() throws -> Migrator {
        Migrator(migrations: try Migration.bundledRelay(), schema: "securepush_relay")
    }

    /// Applies what is missing; returns the names applied by this call.
    @discardableResult
    public func migrate(client: any DatabaseClient, logger: Logger) async throws -> [String] {
        try await client.leased { connection in
            _ = try await connection.query("SELECT pg_advisory_lock(\(Self.lockKey))", logger: logger)
            do {
                let applied = try await apply(on: connection, logger: logger)
                // Time zones a newer tzdata added since the last migrate (quiet hours accept only known names).
                if schema == "securepush", migrations.contains(where: { $0.version >= Self.timeZonesVersion }) {
                    _ = try await connection.query("SELECT securepush.refresh_time_zones()", logger: logger)
                }
                _ = try await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger)
                return applied
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger)
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
        let exists =
            try await connection.query(
                "SELECT to_regclass(\(schema + ".schema_migrations")) IS NOT NULL",
                logger: logger
            ).collect().first?.decode(Bool.self) ?? false
        guard exists else { return migrations.map(\.name) }
        let applied = try await appliedMigrations(on: connection, logger: logger)
        try verify(applied: applied)
        return migrations.filter { applied[$0.version] == nil }.map(\.name)
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
                        )')
                    """),
            logger: logger
        )
        let applied = try await appliedMigrations(on: connection, logger: logger)
        try verify(applied: applied)
        var names: [String] = []
        for migration in migrations where applied[migration.version] == nil {
            logger.info("applying migration", metadata: ["migration.name": "\(migration.name)"])
            do {
                try await connection.inTransaction(logger: logger) {
                    _ = try await connection.query("SELECT pg_temp.securepush_run_sql(\(migration.sql))", logger: logger)
                    var record = PostgresQuery(unsafeSQL: "INSERT INTO \(schema).schema_migrations (version, name, checksum) VALUES ($1, $2, $3)")
                    record.binds.append(migration.version)
                    record.binds.append(migration.name)
                    record.binds.append(migration.checksum)
                    _ = try await connection.query(record, logger: logger)
                }
            } catch {
                // The summary, not the server's text: a failing backfill's message can quote row values.
                throw MigrationError("migration \(migration.name) failed: \(DatabaseErrorSummary(error))")
            }
            names.append(migration.name)
        }
        return names
    }

    private func appliedMigrations(on connection: PostgresConnection, logger: Logger) async throws -> [Int: (name: String, checksum: String)] {
        var applied: [Int: (name: String, checksum: String)] = [:]
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT version, name, checksum FROM \(schema).schema_migrations"), logger: logger)
        for try await (version, name, checksum) in rows.decode((Int, String, String).self) {
            applied[version] = (name, checksum)
        }
        return applied
    }

    private func verify(applied: [Int: (name: String, checksum: String)]) throws {
        let byVersion = Dictionary(uniqueKeysWithValues: migrations.map { ($0.version, $0) })
        for (version, record) in applied.sorted(by: { $0.key < $1.key }) {
            guard let file = byVersion[version] else {
                throw MigrationError(
                    "the database has migration \(record.name) applied, which this build does not know; refusing to run an older build"
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
