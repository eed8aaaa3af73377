import Foundation
import PostgresNIO
import SecurePushStore
import SecurePushTestSupport
import Testing

@Suite("Migrations")
struct MigrationTests {
    @Test("migrate is idempotent and safe when several processes run it at once")
    func idempotentAndConcurrent() async throws {
        try await TestDatabase.with { db in
            try await db.execute("DROP SCHEMA securepush CASCADE")
            let migrator = Migrator(migrations: try Migration.bundled())
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

    @Test("an applied migration that was edited is refused")
    func editedMigrationRefused() async throws {
        try await TestDatabase.with { db in
            var migrations = try Migration.bundled()
            migrations[0] = try Migration(name: migrations[0].name, sql: migrations[0].sql + "\n-- edited\n")
            let migrator = Migrator(migrations: migrations)
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
            let older = Migrator(migrations: Array(try Migration.bundled().prefix(0)))
            await #expect(throws: MigrationError.self) {
                try await older.migrate(client: db.client, logger: db.logger)
            }
        }
    }
}
