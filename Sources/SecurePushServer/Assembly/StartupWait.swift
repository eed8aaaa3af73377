import Logging
import PostgresNIO
import SecurePushCore
import SecurePushPostgres
import SecurePushStore

/// A start-up condition that may yet come true: the database unreachable, a standby, or not migrated
/// (`StartupGate`, `migrate --check`). `StartupWait` retries it; anything else fails at once.
public struct StartupNotReady: Error, CustomStringConvertible, Sendable {
    /// The sentence printed when the wait ends (the same as a `ConfigurationError`'s).
    public var message: String

    /// Creates the condition.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }

    /// Throws unless `pending` (the migrations a database has not applied) is empty, naming them and the
    /// command that applies them: what `serve`, `migrate --check` and the relay wait for.
    public static func unlessMigrated(_ pending: [String], database: String = "the database", command: String = "securepush migrate") throws {
        guard !pending.isEmpty else { return }
        throw StartupNotReady("\(database) needs migrations \(pending.joined(separator: ", ")); run `\(command)` first")
    }
}

/// How `serve` and `migrate` wait for their database at start-up (`SECUREPUSH_STARTUP_WAIT`): a check that
/// throws `StartupNotReady` is tried again every `interval` until it passes or `limit` has gone by, so a
/// process that boots before its database (or before the migration job) waits instead of exiting. The
/// reason is logged at notice level once per change; with a limit of zero the first failure is final.
public struct StartupWait: Sendable {
    /// How long to keep trying.
    public var limit: Duration
    /// The pause between tries.
    public var interval: Duration

    /// Creates a wait.
    public init(limit: Duration, interval: Duration = .seconds(2)) {
        self.limit = limit
        self.interval = interval
    }

    /// Runs `check` until it returns; a `StartupNotReady` still thrown when the limit is reached becomes a
    /// `ConfigurationError` with its message.
    public func run<Result: Sendable>(logger: Logger, _ check: () async throws -> Result) async throws -> Result {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: limit)
        var lastReason: String?
        while true {
            do {
                let result = try await check()
                if lastReason != nil { logger.notice("the database is ready") }
                return result
            } catch let notReady as StartupNotReady {
                guard clock.now.advanced(by: interval) < deadline else { throw ConfigurationError(notReady.message) }
                if notReady.message != lastReason {
                    logger.notice(
                        "waiting for the database",
                        metadata: ["reason": "\(notReady.message)", "wait.limit": "\(ConfigurationValues.format(limit))"])
                    lastReason = notReady.message
                }
                try await Task.sleep(for: interval)
            }
        }
    }
}

extension StartupWait {
    /// Runs `body` with a short-lived client on the database's writable primary (`DatabaseSession`), trying
    /// again while none answers or `body` throws `StartupNotReady` (a migration not yet applied).
    public func withDatabase<Result: Sendable>(
        _ configuration: DatabaseConfiguration, logger: Logger, _ body: @escaping @Sendable (any DatabaseClient) async throws -> Result
    ) async throws -> Result {
        // Each try waits this long for a primary; while waiting, tries are shorter so the limit is kept.
        let attempt: Duration = limit > .zero ? .seconds(5) : .seconds(15)
        return try await run(logger: logger) {
            do {
                return try await DatabaseSession.withClient(configuration, logger: logger, timeout: attempt, body)
            } catch let error as NoWritablePrimary {
                throw StartupNotReady("\(error)")
            }
        }
    }
}
