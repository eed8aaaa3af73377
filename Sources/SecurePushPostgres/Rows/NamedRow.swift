import PostgresNIO

/// A result row read by column name (PostgresNIO's random-access row): a column that is missing is a thrown
/// `MissingColumn`, never a crash, and the order of the columns does not matter.
public struct NamedRow: Sendable {
    let row: PostgresRandomAccessRow

    /// The row `row`, read by name.
    public init(_ row: PostgresRow) {
        self.row = row.makeRandomAccess()
    }

    /// The value of `column`, decoded as `T`.
    public func callAsFunction<T: PostgresDecodable>(_ column: String, as type: T.Type = T.self) throws -> T {
        guard row.contains(column) else { throw MissingColumn(column: column) }
        return try row[column].decode(T.self)
    }
}

/// A column a row type reads is not in the result (the SQL function no longer returns it).
public struct MissingColumn: Error, CustomStringConvertible {
    public var column: String
    public var description: String { "the result has no column \(column)" }
}
