import Logging

/// What an operator may read of a database error: the SQLSTATE with its condition name, the driver's
/// error code, and the schema objects involved. Never the query's binds, the server's detail or message
/// text (they can quote row values: payloads, tokens), nor the query.
///
/// The driver's errors say what they allow by conforming to ``SummarizableError`` (SecurePushStore does
/// it for PostgresNIO's errors and its own), so every module can log a database failure without
/// importing the database's modules.
public struct DatabaseErrorSummary: Sendable, CustomStringConvertible {
    /// The driver's error code (`server`, `connectionError`, `serverClosedConnection`, ...) or the error's kind.
    public var code: String
    /// The five-character SQLSTATE, for errors the server reported.
    public var sqlState: String?
    /// The SQLSTATE's condition name (`undefined_table`, `too_many_connections`, ...) when known.
    public var condition: String?
    /// The constraint, table or column a server error names (schema object names only).
    public var object: String?

    /// A summary with the given parts.
    public init(code: String, sqlState: String? = nil, condition: String? = nil, object: String? = nil) {
        self.code = code
        self.sqlState = sqlState
        self.condition = condition
        self.object = object
    }

    /// Summarizes any error a database call can throw.
    public init(_ error: any Error) {
        switch error {
        case let error as any SummarizableError:
            self = error.summary
        case let error as DeadlineExceeded:
            self.init(code: "deadline exceeded (\(error.timeout))")
        case is CancellationError:
            self.init(code: "cancelled")
        default:
            self.init(code: String(describing: type(of: error)))
        }
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

/// An error that says what of it an operator may read (see ``DatabaseErrorSummary``).
public protocol SummarizableError: Error {
    /// The parts an operator may read.
    var summary: DatabaseErrorSummary { get }
}

extension Logger {
    /// Logs a failed database call with what `DatabaseErrorSummary` allows, at `level` (warning by default).
    /// The one way SecurePush logs database errors: the dispatcher, listener, heartbeat, maintenance,
    /// payload purge, `/status` and `/readyz` all call it.
    public func databaseError(
        _ message: @autoclosure () -> Logger.Message,
        _ error: any Error,
        level: Logger.Level = .warning,
        metadata extra: Logger.Metadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        let summary = DatabaseErrorSummary(error)
        // The caller's file and line, so the log's source is the caller's module, not Core.
        log(level: level, message(), metadata: summary.metadata.merging(extra) { _, new in new }, file: file, function: function, line: line)
    }
}
