import PostgresNIO

/// Runs `body`, turning the database's `22023` (invalid parameter value) and `22007`/`22008` (bad time)
/// into `InvalidInput` with its message.
func invalidInputAsError<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as PSQLError where ["22023", "22007", "22008"].contains(error.serverInfo?[.sqlState] ?? "") {
        throw InvalidInput(message: error.serverInfo?[.message] ?? "invalid input")
    }
}
