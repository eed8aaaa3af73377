import Foundation
import PostgresNIO
import SecurePushPostgres
import SecurePushStore
import SecurePushTestSupport
import Testing

@Suite("Migrations")
struct MigrationTests {
    @Test("migrate is idempotent and safe when several processes run it at once")
    func idempotentAndConcurrent() async throws {
        try await TestDatabase.with { db in
            try await db.execute("DROP SCHEMA securepush CASCADE")
            let migrator = Migrator.securePush(try Migration.bundled())
            let applied = try await withThrowingTaskGroup(of: [String].self) { group in
                for _ in 0..<4 {
                    group.addTask { try await migrator.migrate(client: db.client, logger: db.logger) }
                }
                var all: [[String]] = []
                for try await names in group { all.append(names) }
                return all
            }
            #expect(applied.filter { !$0.isEmpty }.count == 1, "exactly one process applied the files")
            #expect(applied.flatMap { $0 } == migrator.migrations.map(\.name))
            #expect(try await migrator.migrate(client: db.client, logger: db.logger).isEmpty)
            #expect(try await migrator.pending(client: db.client, logger: db.logger).isEmpty)
        }
    }

    @Test("every migrate refreshes the time zones, even one that applies nothing (a newer tzdata's names)")
    func refreshesTimeZones() async throws {
        try await TestDatabase.with { db in
            // A zone the table lacks, as after a tzdata update that added it.
            try await db.execute("DELETE FROM securepush.time_zones WHERE name = 'Europe/Lisbon'")
            let applied = try await Migrator.securePush(try Migration.bundled()).migrate(client: db.client, logger: db.logger)
            #expect(applied.isEmpty)
            #expect(try await db.scalar("SELECT count(*)::bigint FROM securepush.time_zones WHERE name = 'Europe/Lisbon'") == Int64(1))
        }
    }

    @Test("an applied migration that was edited is refused")
    func editedMigrationRefused() async throws {
        try await TestDatabase.with { db in
            var migrations = try Migration.bundled()
            migrations[0] = try Migration(name: migrations[0].name, sql: migrations[0].sql + "\n-- edited\n")
            let migrator = Migrator.securePush(migrations)
            await #expect(throws: MigrationError.self) {
                try await migrator.migrate(client: db.client, logger: db.logger)
            }
            do {
                try await migrator.migrate(client: db.client, logger: db.logger)
            } catch let error as MigrationError {
                #expect(error.message.contains("was edited"))
            }
        }
    }

    @Test("a database migrated by a newer build is refused by an older one")
    func unknownAppliedMigrationRefused() async throws {
        try await TestDatabase.with { db in
            let older = Migrator.securePush(Array(try Migration.bundled().prefix(0)))
            await #expect(throws: MigrationError.self) {
                try await older.migrate(client: db.client, logger: db.logger)
            }
        }
    }

    @Test("an empty database migrated one file at a time ends with the schema of one migrated in one go")
    func stepByStepFromEmpty() async throws {
        let all = try Migration.bundled()
        let full = Migrator.securePush(all)
        let stepwise = try await TestDatabase.withEmpty { db in
            #expect(try await full.pending(client: db.client, logger: db.logger) == all.map(\.name))
            for k in 1...all.count {
                let applied = try await Migrator.securePush(Array(all.prefix(k))).migrate(client: db.client, logger: db.logger)
                #expect(applied == [all[k - 1].name], "step \(k) applies exactly its own file")
                let recorded = try await db.client.query(
                    "SELECT version, name, checksum FROM securepush.schema_migrations ORDER BY version", logger: db.logger
                ).collect().map { try $0.decode((Int, String, String).self) }
                #expect(recorded.map(\.0) == all.prefix(k).map(\.version), "step \(k): applied versions")
                #expect(recorded.map(\.1) == all.prefix(k).map(\.name))
                #expect(recorded.map(\.2) == all.prefix(k).map(\.checksum))
                #expect(try await full.pending(client: db.client, logger: db.logger) == all.dropFirst(k).map(\.name), "step \(k): pending")
            }
            return try await SchemaSnapshot.take(db)
        }
        let oneGo = try await TestDatabase.withEmpty { db in
            #expect(try await full.migrate(client: db.client, logger: db.logger) == all.map(\.name))
            #expect(try await full.pending(client: db.client, logger: db.logger).isEmpty)
            return try await SchemaSnapshot.take(db)
        }
        #expect(stepwise.contains { $0.hasPrefix("function ") } && stepwise.contains { $0.hasPrefix("trigger ") }, "the snapshot sees the schema")
        let onlyStepwise = stepwise.filter { !oneGo.contains($0) }
        let onlyOneGo = oneGo.filter { !stepwise.contains($0) }
        #expect(onlyStepwise.isEmpty && onlyOneGo.isEmpty, "only step by step: \(onlyStepwise)\nonly in one go: \(onlyOneGo)")
        #expect(stepwise == oneGo)
    }
}

/// The parts of a database's schema a migration defines, one sorted line each: relations, columns
/// (type, nullability, default, identity, generation), constraints, indexes, functions, triggers and
/// extensions. Objects of extensions and the system schemas are left out.
enum SchemaSnapshot {
    static let userSchemas = """
        n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%'
        """
    static func notExtensionMember(_ oid: String) -> String {
        "NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.objid = \(oid) AND e.deptype = 'e')"
    }

    static let queries: [String] = [
        """
        SELECT format('relation %I.%I kind %s', n.nspname, c.relname, c.relkind)
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE \(userSchemas) AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
          AND \(notExtensionMember("c.oid"))
        """,
        """
        SELECT format('column %I.%I.%I %s null=%s default=%s identity=%s generated=%s', n.nspname, c.relname, a.attname,
                      format_type(a.atttypid, a.atttypmod), NOT a.attnotnull, coalesce(pg_get_expr(d.adbin, d.adrelid), '-'),
                      a.attidentity, a.attgenerated)
        FROM pg_attribute a
        JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE \(userSchemas) AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND a.attnum > 0 AND NOT a.attisdropped
          AND \(notExtensionMember("c.oid"))
        """,
        """
        SELECT format('constraint %I.%s %I %s', n.nspname, coalesce(c.conrelid::regclass::text, '-'), c.conname, pg_get_constraintdef(c.oid))
        FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
        WHERE \(userSchemas)
        """,
        """
        SELECT format('index %s', pg_get_indexdef(i.indexrelid))
        FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE \(userSchemas) AND \(notExtensionMember("i.indrelid"))
        """,
        """
        SELECT format('function %s %s', p.oid::regprocedure, pg_get_functiondef(p.oid))
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE \(userSchemas) AND p.prokind IN ('f', 'p')
          AND \(notExtensionMember("p.oid"))
        """,
        """
        SELECT format('trigger %s %s', t.tgrelid::regclass, pg_get_triggerdef(t.oid))
        FROM pg_trigger t WHERE NOT t.tgisinternal
        """,
        """
        SELECT format('extension %I %s in %I', e.extname, e.extversion, n.nspname)
        FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
        """,
    ]

    static func take(_ db: TestDatabase) async throws -> [String] {
        var lines: [String] = []
        for query in queries {
            let rows = try await db.client.query(PostgresQuery(unsafeSQL: query), logger: db.logger).collect()
            lines += try rows.map { try $0.decode(String.self) }
        }
        return lines.sorted()
    }
}
