import Foundation
import PostgresNIO
import SecurePushPostgres
import SecurePushRelay
import SecurePushStore
import SecurePushTestSupport
import Testing

/// Each SQL function the Swift code calls has one row type (`FunctionRow`) that reads its result by column name;
/// this is where a routine that no longer returns a column a row type reads fails (docs/sql.md).
@Suite("Function rows")
struct FunctionRowTests {
    /// The result columns (`RETURNS TABLE` or `OUT` parameters) of `signature`, in order.
    static func resultColumns(_ signature: String, _ db: TestDatabase) async throws -> [String] {
        let rows = try await db.client.query(
            """
            SELECT a.name FROM pg_proc p,
                 unnest(p.proargnames, coalesce(p.proargmodes, array_fill('i'::"char", array[cardinality(p.proargnames)])))
                     WITH ORDINALITY AS a(name, mode, position)
            WHERE p.oid = \(signature)::regprocedure AND a.mode IN ('t', 'o', 'b')
            ORDER BY a.position
            """, logger: db.logger
        ).collect()
        return try rows.map { try $0.decode(String.self) }
    }

    static func check(_ types: [any FunctionRow.Type], in db: TestDatabase) async throws {
        for type in types {
            let columns = try await Self.resultColumns(type.function, db)
            let missing = type.columns.filter { !columns.contains($0) }
            #expect(missing.isEmpty, "\(type) reads \(missing) that \(type.function) does not return (it returns \(columns))")
            #expect(Set(type.columns).count == type.columns.count, "\(type) names a column twice")
        }
    }

    @Test("every row type reads only columns its function returns at head (the store's functions)")
    func storeRows() async throws {
        try await TestDatabase.with { db in try await Self.check(FunctionRows.all, in: db) }
    }

    @Test("every row type reads only columns its function returns at head (the relay's functions)")
    func relayRows() async throws {
        try await TestDatabase.withEmpty { db in
            _ = try await RelayMigrations.migrator().migrate(client: db.client, logger: db.logger)
            try await Self.check([AdmitRow.self], in: db)
        }
    }

    @Test("a row without a column its type reads throws MissingColumn, and the order of the columns does not matter")
    func byName() async throws {
        try await TestDatabase.with { db in
            let reordered = try await db.client.query(
                "SELECT 'fcm'::text AS platform, 1.0::float8 AS fetch_ratio, 2::bigint AS fetched, 3::bigint AS accepted, NULL::float8 AS push_to_fetch_p50_seconds, NULL::float8 AS push_to_fetch_p99_seconds",
                logger: db.logger
            ).collect()
            let row = try FetchStatsRow(row: try #require(reordered.first))
            #expect(row.accepted == 3 && row.fetched == 2 && row.platform == "fcm")
            let short = try await db.client.query("SELECT 'fcm'::text AS platform", logger: db.logger).collect()
            #expect(throws: MissingColumn.self) { try FetchStatsRow(row: try #require(short.first)) }
        }
    }
}
