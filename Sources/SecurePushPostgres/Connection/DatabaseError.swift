import PostgresNIO
import SecurePushCore
import _ConnectionPoolModule

extension PSQLError: SummarizableError {
    /// The SQLSTATE, its condition name, the error code and the schema object; for connection-level
    /// causes (refused, reset, TLS) the cause, which carries no row data.
    public var summary: DatabaseErrorSummary {
        let info = serverInfo
        let sqlState = info?[.sqlState]
        var summary = DatabaseErrorSummary(
            code: code.description, sqlState: sqlState, condition: sqlState.flatMap { SQLState.conditionNames[$0] },
            object: info?[.constraintName] ?? info?[.tableName] ?? info?[.columnName]
        )
        if sqlState == nil, let underlying {
            summary.code += " (\(String(describing: type(of: underlying))): \(underlying))"
        }
        if let hint = sqlState.flatMap({ SQLState.hints[$0] }) { summary.code += " (\(hint))" }
        return summary
    }
}

extension MigrationError: SummarizableError {
    /// The migration's own message (it names the file and the database error's summary).
    public var summary: DatabaseErrorSummary { DatabaseErrorSummary(code: "migration: \(message)") }
}

extension DatabaseErrorSummary {
    /// Whether the error says the database is unavailable for now (a connection lost, refused or
    /// terminated, the server shutting down or out of connection slots, a serialization failure or
    /// deadlock, a statement ended by the API pool's `statement_timeout` or by a `lock_timeout`): the request can be retried, so the
    /// API answers 503, not 500.
    public static func isUnavailable(_ error: any Error) -> Bool {
        // The pool's own errors (no connection could be made in time, the pool is shutting down).
        if error is ConnectionPoolError { return true }
        // Between primaries in a failover: no host is a writable primary yet.
        if error is NoWritablePrimary { return true }
        guard let error = error as? PSQLError else { return false }
        if let state = error.serverInfo?[.sqlState] {
            // 25006: a write reached a node that is (now) read-only, a demoted primary in a failover.
            return state.hasPrefix("08") || state.hasPrefix("57P") || state == "53300" || state == "40001" || state == "40P01" || state == "25006"
                || state == "57014" || state == SQLState.lockNotAvailable
        }
        let transient: [PSQLError.Code] = [.connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed]
        return transient.contains(error.code)
    }
}

/// SQLSTATE condition names (PostgreSQL Appendix A) for the errors an operator is likely to meet.
package enum SQLState {
    /// A lock not taken within `lock_timeout` (`device_fetch_requests`, `cancel`): nothing was written; retry.
    package static let lockNotAvailable = "55P03"

    /// What to check, for the refusals a connection meets at start-up: the server's own reason stays in its
    /// log (its message text is never shown, see `DatabaseErrorSummary`), so the summary says where to look.
    static let hints: [String: String] = [
        "28000":
            "the server refused this client: check pg_hba.conf's rule for this user, address and TLS, and the client certificate (sslcert, sslkey)",
        "28P01": "the password in DATABASE_URL is wrong for this user",
        "3D000": "the database named in DATABASE_URL does not exist",
    ]

    static let conditionNames: [String: String] = [
        "08000": "connection_exception", "08003": "connection_does_not_exist", "08006": "connection_failure",
        "08001": "sqlclient_unable_to_establish_sqlconnection", "08004": "sqlserver_rejected_establishment_of_sqlconnection",
        "22001": "string_data_right_truncation", "22004": "null_value_not_allowed", "22023": "invalid_parameter_value",
        "22P02": "invalid_text_representation", "23502": "not_null_violation", "23503": "foreign_key_violation",
        "23505": "unique_violation", "23514": "check_violation", "25006": "read_only_sql_transaction",
        "28000": "invalid_authorization_specification", "28P01": "invalid_password", "3D000": "invalid_catalog_name",
        "3F000": "invalid_schema_name", "40001": "serialization_failure", "40P01": "deadlock_detected",
        "42501": "insufficient_privilege", "42703": "undefined_column", "42883": "undefined_function",
        "42P01": "undefined_table", "53100": "disk_full", "53200": "out_of_memory", "53300": "too_many_connections",
        "55P03": "lock_not_available", "57014": "query_canceled", "57P01": "admin_shutdown", "57P02": "crash_shutdown",
        "57P03": "cannot_connect_now", "58000": "system_error", "XX000": "internal_error",
    ]
}
