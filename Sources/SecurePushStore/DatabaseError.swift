import Logging
import PostgresNIO
import SecurePushCore
import _ConnectionPoolModule

/// What an operator may read of a database error: the SQLSTATE with its condition name, PostgresNIO's
/// error code, and the schema objects involved. Never the query's binds, the server's detail or message
/// text (they can quote row values: payloads, tokens), nor the query.
public struct DatabaseErrorSummary: Sendable, CustomStringConvertible {
    /// PostgresNIO's error code (`server`, `connectionError`, `serverClosedConnection`, ...) or the error's kind.
    public var code: String
    /// The five-character SQLSTATE, for errors the server reported.
    public var sqlState: String?
    /// The SQLSTATE's condition name (`undefined_table`, `too_many_connections`, ...) when known.
    public var condition: String?
    /// The constraint, table or column a server error names (schema object names only).
    public var object: String?

    /// Summarizes any error a database call can throw.
    public init(_ error: any Error) {
        switch error {
        case let error as PSQLError:
            self.code = error.code.description
            let info = error.serverInfo
            self.sqlState = info?[.sqlState]
            self.condition = sqlState.flatMap { SQLState.conditionNames[$0] }
            self.object = info?[.constraintName] ?? info?[.tableName] ?? info?[.columnName]
            if sqlState == nil, let underlying = error.underlying {
                // Connection-level causes (refused, reset, TLS) carry no row data.
                self.code += " (\(String(describing: type(of: underlying))): \(underlying))"
            }
        case let error as DeadlineExceeded:
            self.code = "deadline exceeded (\(error.timeout))"
        case is CancellationError:
            self.code = "cancelled"
        case let error as MigrationError:
            self.code = "migration: \(error.message)"
        default:
            self.code = String(describing: type(of: error))
        }
    }

    /// Whether the error says the database is unavailable for now (a connection lost, refused or
    /// terminated, the server shutting down or out of connection slots, a serialization failure or
    /// deadlock): the request can be retried, so the API answers 503, not 500.
    public static func isUnavailable(_ error: any Error) -> Bool {
        // The pool's own errors (no connection could be made in time, the pool is shutting down).
        if error is ConnectionPoolError { return true }
        // Between primaries in a failover: no host is a writable primary yet.
        if error is NoWritablePrimary { return true }
        guard let error = error as? PSQLError else { return false }
        if let state = error.serverInfo?[.sqlState] {
            // 25006: a write reached a node that is (now) read-only, a demoted primary in a failover.
            return state.hasPrefix("08") || state.hasPrefix("57P") || state == "53300" || state == "40001" || state == "40P01" || state == "25006"
        }
        let transient: [PSQLError.Code] = [.connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed]
        return transient.contains(error.code)
    }

    /// The summary as one line: `sqlstate 42P01 (undefined_table), code server, object notifications`.
    public var description: String {
        var parts: [String] = []
        if let sqlState { parts.append("sqlstate \(sqlState)" + (condition.map { " (\($0))" } ?? "")) }
        parts.append("code \(code)")
        if let object { parts.append("object \(object)") }
        return parts.joined(separator: ", ")
    }

    /// Log metadata: `db.code`, and `db.sqlstate`, `db.condition`, `db.object` when known.
    public var metadata: Logger.Metadata {
        var metadata: Logger.Metadata = ["db.code": "\(code)"]
        if let sqlState { metadata["db.sqlstate"] = "\(sqlState)" }
        if let condition { metadata["db.condition"] = "\(condition)" }
        if let object { metadata["db.object"] = "\(object)" }
        return metadata
    }
}

extension Logger {
    /// Logs a failed database call with what `DatabaseErrorSummary` allows, at `level` (warning by default).
    /// The one way SecurePush logs database errors: the dispatcher, listener, heartbeat, maintenance,
    /// payload purge, `/status` and `/readyz` all call it.
    public func databaseError(
        _ message: @autoclosure () -> Logger.Message,
        _ error: any Error,
        level: Logger.Level = .warning,
        metadata extra: Logger.Metadata = [:]
    ) {
        let summary = DatabaseErrorSummary(error)
        log(level: level, message(), metadata: summary.metadata.merging(extra) { _, new in new })
    }
}

/// SQLSTATE condition names (PostgreSQL Appendix A) for the errors an operator is likely to meet.
enum SQLState {
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
