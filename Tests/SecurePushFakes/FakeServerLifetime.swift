/// A fake server a test starts and must stop.
public protocol StoppableFake: Sendable {
    /// Closes the listening socket and every connection.
    func shutdown() async
}

/// Runs `body`, then shuts `fake` down (awaited, also when `body` throws): no shutdown fired and forgotten.
public func withShutdown<Fake: StoppableFake, T>(of fake: Fake, _ body: () async throws -> T) async throws -> T {
    do {
        let result = try await body()
        await fake.shutdown()
        return result
    } catch {
        await fake.shutdown()
        throw error
    }
}
