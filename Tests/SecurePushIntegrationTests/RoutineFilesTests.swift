import Foundation
import PostgresNIO
import SecurePushPostgres
import SecurePushRelay
import SecurePushStore
import SecurePushTestSupport
import Testing

/// Every SQL function, trigger function and view has one home: its routine file (`sql/routines/NAME.sql`, and
/// `sql/relay/routines/` for the relay's schema), holding its current definition and privileges. Numbered
/// migrations carry the released history; `ops/release-migration` writes a changed routine into the next one.
/// These tests fail when the two disagree: a routine edited but not released, a function released but
/// missing its file or defined in two files (docs/sql.md).
@Suite("Routine files")
struct RoutineFilesTests {
    /// One schema's migrations and routine folder.
    struct Wing: Sendable, CustomTestStringConvertible {
        var schema: String
        var folder: String
        var testDescription: String { schema }

        func migrator() throws -> Migrator {
            schema == "securepush" ? Migrator.securePush(try Migration.bundled()) : try RelayMigrations.migrator()
        }

        var directory: URL {
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent(folder)
        }

        /// The routine files by routine name, and their text.
        func files() throws -> [String: String] {
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".sql") }
            return Dictionary(
                uniqueKeysWithValues: try names.map {
                    (String($0.dropLast(4)), try String(contentsOf: directory.appendingPathComponent($0), encoding: .utf8))
                })
        }
    }

    static let wings = [Wing(schema: "securepush", folder: "sql/routines"), Wing(schema: "securepush_relay", folder: "sql/relay/routines")]

    /// A routine as the database holds it: its kind, name, identity, full definition and privileges.
    struct Definition: Hashable, Sendable, CustomStringConvertible {
        var kind: String
        var name: String
        var identity: String
        var definition: String
        var privileges: String
        var description: String { "\(kind) \(name)(\(identity)) [\(privileges)]" }
    }

    /// The functions (not an extension's) and views of `schema`.
    static func definitions(_ schema: String, _ db: TestDatabase) async throws -> Set<Definition> {
        let rows = try await db.client.query(
            """
            SELECT 'function', p.proname::text, pg_get_function_identity_arguments(p.oid), pg_get_functiondef(p.oid),
                   coalesce(array_to_string(p.proacl, ','), '')
            FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = \(schema)
              AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
            UNION ALL
            SELECT 'view', c.relname::text, '', pg_get_viewdef(c.oid), coalesce(array_to_string(c.relacl, ','), '')
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = \(schema) AND c.relkind = 'v'
            """, logger: db.logger
        ).collect()
        return Set(
            try rows.map { row in
                let (kind, name, identity, definition, privileges) = try row.decode((String, String, String, String, String).self)
                return Definition(kind: kind, name: name, identity: identity, definition: definition, privileges: privileges)
            })
    }

    /// The routines a file defines (`CREATE OR REPLACE FUNCTION|VIEW schema.NAME`), by name, with their count.
    static func defined(in text: String, schema: String) -> [String: Int] {
        var counts: [String: Int] = [:]
        let pattern = try! Regex("(?im)^CREATE\\s+(?:OR\\s+REPLACE\\s+)?(?:FUNCTION|VIEW)\\s+\(schema)\\.([a-z_][a-z0-9_]*)")
        for match in text.matches(of: pattern) {
            if let name = match.output[1].substring { counts[String(name), default: 0] += 1 }
        }
        return counts
    }

    @Test("routine files are laid out for reading: no line over 120 characters, each option of a definition on its own line", arguments: wings)
    func layout(_ wing: Wing) throws {
        var long: [String] = []
        var crowded: [String] = []
        let first = "(LANGUAGE|SECURITY|SET|STABLE|IMMUTABLE|VOLATILE|STRICT|PARALLEL|COST|ROWS)"
        let another = "(SECURITY (DEFINER|INVOKER)|SET [a-z_]+ TO|STABLE|IMMUTABLE|VOLATILE|STRICT|PARALLEL|COST|ROWS)"
        let options = try NSRegularExpression(pattern: "^ \(first)\\b.* \(another)\\b")
        for (name, text) in try wing.files() {
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let line = String(line)
                if line.count > 120 { long.append("\(name).sql:\(number + 1)") }
                if options.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil { crowded.append("\(name).sql:\(number + 1)") }
            }
        }
        #expect(long.isEmpty, "lines over 120 characters: \(long.sorted())")
        #expect(crowded.isEmpty, "several options on one line: \(crowded.sorted())")
    }

    @Test("each function, trigger function and view of the migrated head is defined in exactly one routine file", arguments: wings)
    func oneHomeEach(_ wing: Wing) async throws {
        let head = try await TestDatabase.withEmpty { db in
            _ = try await wing.migrator().migrate(client: db.client, logger: db.logger)
            return try await Self.definitions(wing.schema, db)
        }
        var overloads: [String: Int] = [:]
        for routine in head { overloads[routine.name, default: 0] += 1 }
        let files = try wing.files()
        for (name, text) in files {
            let defined = Self.defined(in: text, schema: wing.schema)
            #expect(
                defined == [name: overloads[name] ?? 0],
                "\(wing.folder)/\(name).sql must define \(name) (all \(overloads[name] ?? 0) of its signatures at head) and nothing else; it defines \(defined)"
            )
        }
        let missing = Set(overloads.keys).subtracting(files.keys)
        #expect(missing.isEmpty, "released routines without a routine file in \(wing.folder): \(missing.sorted())")
    }

    @Test("applying every routine file to the migrated head changes nothing: the released migrations carry each routine file", arguments: wings)
    func headMatchesRoutines(_ wing: Wing) async throws {
        let files = try wing.files()
        let (head, applied) = try await TestDatabase.withEmpty { db in
            _ = try await wing.migrator().migrate(client: db.client, logger: db.logger)
            let head = try await Self.definitions(wing.schema, db)
            _ = try await db.client.query(
                """
                CREATE FUNCTION pg_temp.run_routine(script text) RETURNS void LANGUAGE plpgsql AS $fn$ BEGIN EXECUTE script; END $fn$
                """, logger: db.logger)
            for name in files.keys.sorted() {
                _ = try await db.client.withConnection { connection in
                    try await connection.query(
                        """
                        CREATE OR REPLACE FUNCTION pg_temp.run_routine(script text) RETURNS void LANGUAGE plpgsql AS $fn$ BEGIN EXECUTE script; END $fn$
                        """, logger: db.logger)
                    return try await connection.query("SELECT pg_temp.run_routine(\(files[name]!))", logger: db.logger).collect()
                }
            }
            return (head, try await Self.definitions(wing.schema, db))
        }
        let changed = applied.symmetricDifference(head).map(\.name)
        #expect(
            changed.isEmpty,
            "routine files that differ from the released migrations (run ops/release-migration to write them into the next one): \(Set(changed).sorted())"
        )
    }
}
