import PostgresNIO

/// The row of one SQL function the Swift code calls: the function's signature, the result columns this type
/// reads (by name: `NamedRow`), and the decoding. `FunctionRowTests` checks every row type's columns against
/// its function's result columns at head, so a column renamed or removed in a routine file
/// (`sql/routines/`) fails that test, not a production request.
public protocol FunctionRow: Sendable {
    /// The function's signature as `regprocedure` reads it, e.g. `securepush.device_check(uuid, bytea, text[])`.
    static var function: String { get }
    /// The function's result columns this type reads.
    static var columns: [String] { get }
    /// Decodes one result row.
    init(_ row: NamedRow) throws
}

extension FunctionRow {
    /// Decodes one result row of the function.
    public init(row: PostgresRow) throws {
        try self.init(NamedRow(row))
    }
}
