import Logging
import PostgresNIO

/// Keeps the functions that run as the schema owner from being shadowed (issue 45): `migrate` refuses, with
/// what to run, when pgcrypto sits outside `securepush` and this role may not move it there (migration 031
/// moves it), and when a schema on the fixed search path of a `securepush` function grants CREATE to a role
/// other than its owner (a login of that role could plant a function that resolves before the real one and
/// runs as the owner). It warns when this session's own search path has such a schema: the server's
/// statements run with it.
struct DefinerPathGuard: Sendable {
    let connection: PostgresConnection
    let logger: Logger

    /// Before migrating: pgcrypto is in `securepush`, or absent, or this role may move it there. A superuser
    /// moves it (`ALTER EXTENSION`); its owner re-creates it (the functions of a trusted extension are the
    /// bootstrap superuser's), which needs that nothing outside pgcrypto refers to them.
    func checkCrypto() async throws {
        let rows = try await connection.query(
            """
            WITH extension AS (SELECT e.oid, e.extowner, e.extnamespace FROM pg_catalog.pg_extension e WHERE e.extname = 'pgcrypto'),
                 members AS (SELECT d.classid, d.objid FROM pg_catalog.pg_depend d, extension
                             WHERE d.refclassid = 'pg_catalog.pg_extension'::regclass AND d.refobjid = extension.oid AND d.deptype = 'e')
            SELECT n.nspname::text, r.rolsuper, pg_catalog.pg_has_role(extension.extowner, 'USAGE'),
                   pg_catalog.pg_get_userbyid(extension.extowner)::text,
                   (SELECT count(*) FROM pg_catalog.pg_depend d
                    WHERE d.deptype = 'n' AND (d.refclassid, d.refobjid) IN (SELECT classid, objid FROM members)
                      AND (d.classid, d.objid) NOT IN (SELECT classid, objid FROM members)
                      -- SecurePush's own column defaults (the collapse salt's): migration 031 sets them again.
                      AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attrdef a JOIN pg_catalog.pg_class c ON c.oid = a.adrelid
                                      JOIN pg_catalog.pg_namespace cn ON cn.oid = c.relnamespace
                                      WHERE d.classid = 'pg_catalog.pg_attrdef'::regclass AND a.oid = d.objid AND cn.nspname = 'securepush'))
            FROM extension JOIN pg_catalog.pg_namespace n ON n.oid = extension.extnamespace
            JOIN pg_catalog.pg_roles r ON r.rolname = current_user
            """, logger: logger
        ).collect()
        guard let row = rows.first else { return }
        let (schema, superuser, owns, owner, dependents) = try row.decode((String, Bool, Bool, String, Int64).self)
        guard schema != "securepush", !superuser else { return }
        let move =
            "as a superuser, run ALTER EXTENSION pgcrypto SET SCHEMA securepush (CREATE SCHEMA securepush AUTHORIZATION <the migrating role> first on a new database), then migrate again; other users of this database that call pgcrypto unqualified then need securepush on their search path"
        guard owns else {
            throw MigrationError(
                "pgcrypto is in schema \(schema), and SecurePush's functions that run as the schema owner need it in securepush, where only the owner creates; this role may not move it (its owner is \(owner)): \(move)"
            )
        }
        guard dependents == 0 else {
            throw MigrationError(
                "pgcrypto is in schema \(schema), and SecurePush's functions that run as the schema owner need it in securepush, where only the owner creates; \(dependents) objects outside pgcrypto refer to its functions, so this role cannot create it again there: \(move)"
            )
        }
    }

    /// Before and after migrating: no schema on a fixed search path of `securepush`'s functions (nor
    /// `securepush` itself) grants CREATE to a role other than its owner.
    func checkPaths() async throws {
        let writable = try await grants(
            """
            SELECT DISTINCT pg_catalog.btrim(s, ' "') FROM pg_catalog.pg_proc p
            CROSS JOIN LATERAL pg_catalog.unnest(p.proconfig) c
            CROSS JOIN LATERAL pg_catalog.regexp_split_to_table(pg_catalog.substr(c, 13), ',') s
            WHERE p.pronamespace = (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = 'securepush') AND c LIKE 'search_path=%'
            UNION SELECT 'securepush'
            """)
        guard let (schema, grantee) = writable.first else { return }
        let who = grantee == "PUBLIC" ? "any login" : "a login of \(grantee)"
        throw MigrationError(
            "schema \(schema) grants CREATE to \(grantee), and SecurePush's functions that run as the schema owner search it: \(who) could plant a function there that runs as the owner. Run REVOKE CREATE ON SCHEMA \(schema) FROM \(grantee), then migrate again"
        )
    }

    /// Warns when this session's search path (the server's statements use the same role's) has a schema
    /// another role may create in: PostgreSQL 14 and older let every role create in `public`.
    func warnAboutSessionPath() async throws {
        for (schema, grantee) in try await grants("SELECT pg_catalog.unnest(pg_catalog.current_schemas(false))::text") {
            logger.warning(
                "schema \(schema) on this role's search path grants CREATE to \(grantee): a function planted there can run in SecurePush's own statements; run REVOKE CREATE ON SCHEMA \(schema) FROM \(grantee) (PostgreSQL 15's default for public)"
            )
        }
    }

    /// The (schema, grantee) pairs among the schemas `names` selects where a role other than the schema's
    /// owner (or PUBLIC) holds CREATE.
    private func grants(_ names: String) async throws -> [(String, String)] {
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    WITH names(nspname) AS (\(names))
                    SELECT n.nspname::text, CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(a.grantee)) END
                    FROM names JOIN pg_catalog.pg_namespace n ON n.nspname = names.nspname
                    CROSS JOIN LATERAL pg_catalog.aclexplode(coalesce(n.nspacl, pg_catalog.acldefault('n', n.nspowner))) a
                    WHERE a.privilege_type = 'CREATE' AND a.grantee <> n.nspowner
                    ORDER BY 1, 2
                    """), logger: logger
        ).collect()
        return try rows.map { try $0.decode((String, String).self) }
    }
}
