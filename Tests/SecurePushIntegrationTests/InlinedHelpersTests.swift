import Foundation
import PostgresNIO
import SecurePushTestSupport
import Testing

/// PostgreSQL 15 plans an SQL function it does not inline again at every statement that calls it, so the
/// helpers the claim and the fan-out call are written to be inlined (migration 050: `claim_items` had a `SET`
/// clause and `pushable` a subquery, and each was planned again in every claim). A helper the planner inlines
/// leaves no call of its own in the plan; this fails when one stops being inlined.
@Suite("Inlined helpers")
struct InlinedHelpersTests {
    /// Each helper with a statement that calls it as its hot callers do.
    static let statements: [(helper: String, statement: String)] = [
        ("pushable", "SELECT n.id FROM securepush.notifications n WHERE securepush.pushable(n)"),
        ("claim_items", "SELECT * FROM securepush.claimed_items WHERE token = gen_random_uuid()"),
        // A volatile argument would stop the inlining; the fan-out passes an array it holds.
        ("fan_out_rows", "SELECT n.id FROM securepush.fan_out_rows('{00000000-0000-0000-0000-000000000001}'::uuid[]) n"),
        (
            "badge_steps",
            """
            SELECT s.* FROM securepush.notifications n,
                securepush.badge_steps(1, n.read_at, n.purged_at, n.deliver_at, n.expires_at) s
            """
        ),
        (
            "superseding",
            "SELECT n.id FROM securepush.notifications n WHERE EXISTS (SELECT 1 FROM securepush.superseding(n, '{}', '{}'))"
        ),
    ]

    @Test("the claim's and the fan-out's SQL helpers are inlined into their callers' plans", arguments: statements.map(\.helper))
    func inlined(helper: String) async throws {
        let statement = try #require(Self.statements.first { $0.helper == helper }).statement
        try await TestDatabase.with { db in
            let plan = try await db.client.withConnection { connection in
                try await connection.query(PostgresQuery(unsafeSQL: "EXPLAIN (VERBOSE, COSTS OFF) " + statement), logger: db.logger)
                    .collect().map { try $0.decode(String.self) }
            }
            #expect(!plan.isEmpty, "EXPLAIN answered")
            // Not inlined, a helper is a call: `Filter: pushable(n.*)`, `Function Call: claim_items(c.*)`. Inlined, a
            // set-returning one may still lend its name to a subquery (`Subquery Scan on superseding`).
            let calls = plan.filter { $0.contains("\(helper)(") || $0.contains("Function Scan on securepush.\(helper)") }
            #expect(calls.isEmpty, "\(helper) is called, not inlined: \(calls.joined(separator: " | "))")
        }
    }

    @Test(
        "the unread badges are PL/pgSQL: an aggregate is never inlined, and their statements are planned once per session",
        arguments: ["securepush.unread_badge(text, integer)", "securepush.unread_badges(text[], integer)"])
    func unreadBadgeIsPlpgsql(signature: String) async throws {
        try await TestDatabase.with { db in
            let language: String = try await db.scalar(
                """
                SELECT l.lanname::text FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_language l ON l.oid = p.prolang
                WHERE p.oid = \(signature)::regprocedure
                """)
            #expect(language == "plpgsql")
        }
    }
}
