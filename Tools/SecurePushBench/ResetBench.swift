import ArgumentParser

/// `securepush-bench reset`: migrates the database in DATABASE_URL and empties the tables the bench rows fill.
struct ResetBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset", abstract: "Migrate DATABASE_URL and empty the tables the bench rows fill.")

    func run() async throws {
        try await BenchDatabase().withClient { _ in }
    }
}
