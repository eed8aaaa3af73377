import Foundation
import Logging
import PostgresNIO
import SecurePushCore
import SecurePushPostgres
import SecurePushServer
import SecurePushStore
import Testing

/// A private database for one test, copied from a migrated template, dropped afterwards.
///
/// The server comes from `DATABASE_URL` (ops/test starts a private cluster and sets it).
public struct TestDatabase: Sendable {
    /// The URL of this test's own database.
    public let url: DatabaseURL
    /// A running client on it.
    public let client: PostgresClient
    /// A logger for test code.
    public let logger: Logger

    /// Creates a fresh migrated database, runs `body`, and drops the database.
    public static func with<T: Sendable>(_ body: @Sendable (TestDatabase) async throws -> T) async throws -> T {
        try await with(empty: false, body)
    }

    /// Creates an empty database (a copy of `template0`: no schema, nothing migrated), runs `body`, and drops the database.
    public static func withEmpty<T: Sendable>(_ body: @Sendable (TestDatabase) async throws -> T) async throws -> T {
        try await with(empty: true, body)
    }

    private static func with<T: Sendable>(empty: Bool, _ body: @Sendable (TestDatabase) async throws -> T) async throws -> T {
        let url: DatabaseURL
        do {
            url = try await TemplateDatabase.shared.createDatabase(empty: empty)
        } catch let error as PSQLError {
            throw TestFailure("creating the test database failed: \(String(reflecting: error))")
        }
        let logger = Logger(label: "securepush.test")
        let client = url.makeClient(poolSize: 20, logger: logger)
        let database = TestDatabase(url: url, client: client, logger: logger)
        let result = await withRunning(client) { try await body(database) }
        try? await TemplateDatabase.shared.dropDatabase(url.database)
        do {
            return try result.get()
        } catch let error as PSQLError {
            // PostgresNIO hides details by default; in tests we want the server's message.
            throw TestFailure(String(reflecting: error))
        }
    }

    /// Runs `body` while `client` runs, then stops the client; `body`'s result or error, so the caller can clean up first.
    public static func withRunning<T: Sendable>(_ client: PostgresClient, _ body: () async throws -> T) async -> Result<T, any Error> {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            do {
                return .success(try await body())
            } catch {
                return .failure(error)
            }
        }
    }

    /// Runs a query and decodes the first column of the first row.
    /// Bounded by a deadline: a query caught on a connection that a test killed must fail, not hang.
    public func scalar<V: PostgresDecodable & Sendable>(_ query: PostgresQuery, as type: V.Type = V.self) async throws -> V {
        let (client, logger) = (self.client, self.logger)
        return try await withDeadline(.seconds(10)) {
            let rows = try await client.query(query, logger: logger).collect()
            guard let row = rows.first else { throw TestFailure("query returned no rows") }
            return try row.decode(V.self)
        }
    }

    /// Runs a statement (bounded by a deadline, like `scalar`), reading its rows to the end so an error the
    /// database raises while executing is thrown, not lost with an unread sequence.
    public func execute(_ query: PostgresQuery) async throws {
        let (client, logger) = (self.client, self.logger)
        try await withDeadline(.seconds(30)) {
            _ = try await client.query(query, logger: logger).collect()
        }
    }

    /// Inserts an active device and returns its id.
    @discardableResult
    public func insertDevice(user: String, platform: String = "simulated", token: String, options: String = "{}") async throws -> UUID {
        try await scalar(
            """
            INSERT INTO securepush.devices (user_id, platform, token, options)
            VALUES (\(user), \(platform), \(token), \(options)::jsonb) RETURNING id
            """
        )
    }

    /// Enqueues with `securepush.enqueue` and returns the id.
    public func enqueue(user: String, payload: String, ttl: String? = nil, idempotencyKey: String? = nil) async throws -> UUID {
        try await scalar(
            """
            SELECT securepush.enqueue(user_id => \(user), payload => \(payload)::jsonb,
                                      ttl => \(ttl)::interval, idempotency_key => \(idempotencyKey))
            """
        )
    }

    /// Fans out every committed notification still waiting for it, as a dispatcher's claim does first
    /// (`securepush.fan_out_queued`), and returns how many it took; then waits for those a running dispatcher
    /// was fanning out at that moment. For a test that looks at deliveries, badge rows or the history right
    /// after an INSERT.
    @discardableResult
    public func fanOut() async throws -> Int32 {
        let taken: Int32 = try await scalar("SELECT securepush.fan_out_queued(2147483647)")
        try await execute("SELECT securepush.fan_out_batch(array_agg(notification_id)) FROM securepush.fan_out_queue")
        return taken
    }

    /// Inserts a simulated device for every `g` in `numbers`, in one statement; `user` and `token` are SQL
    /// expressions of `g` (such as `'fleet-' || (g % 50)`).
    public func insertSimulatedDevices(_ numbers: ClosedRange<Int>, user: String, token: String) async throws {
        try await execute(
            """
            INSERT INTO securepush.devices (user_id, platform, token)
            SELECT \(unescaped: user), 'simulated', \(unescaped: token) \(unescaped: Self.series(numbers))
            """
        )
    }

    /// Inserts a notification with the payload `{"n": g}` for every `g` in `numbers`, in one statement (so one
    /// statement-level trigger); `user` is an SQL expression of `g` (such as `'bulk-' || (g % 100 + 1)`).
    public func insertNumberedNotifications(_ numbers: ClosedRange<Int>, user: String) async throws {
        try await execute(
            """
            INSERT INTO securepush.notifications (user_id, payload)
            SELECT \(unescaped: user), jsonb_build_object('n', g) \(unescaped: Self.series(numbers))
            """
        )
    }

    /// `FROM generate_series(<first>, <last>) g`.
    private static func series(_ numbers: ClosedRange<Int>) -> String {
        "FROM generate_series(\(numbers.lowerBound), \(numbers.upperBound)) g"
    }

    /// How many audit-log rows record `event`, for `device` only when it is given.
    public func auditEvents(_ event: String, device: UUID? = nil) async throws -> Int64 {
        if let device {
            return try await scalar("SELECT count(*)::bigint FROM securepush.audit_log WHERE event = \(event) AND device_id = \(device)")
        }
        return try await scalar("SELECT count(*)::bigint FROM securepush.audit_log WHERE event = \(event)")
    }

    /// How many deliveries are claimed now: delivery rows in state `claimed` and items of claims' leases
    /// (`securepush.claimed_items`, migration 046).
    public func claimedCount() async throws -> Int64 {
        try await scalar(
            "SELECT (SELECT count(*) FROM securepush.deliveries WHERE state = 'claimed') + (SELECT count(*) FROM securepush.claimed_items)")
    }

    /// Waits until every lease row (`securepush.claims`) has passed its end.
    public func awaitLeasesEnded() async throws {
        try await eventually("the leases ended") {
            try await scalar("SELECT count(*) FROM securepush.claims WHERE lease_expires_at >= now()", as: Int64.self) == 0
        }
    }

    /// After a dispatcher stopped: nothing is left pending or claimed, and the history holds exactly
    /// `logged` rows, so nothing more can be pushed (instead of sleeping to see that nothing happens).
    public func expectQueueDrained(logged: Int64, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let left: Int64 = try await scalar("SELECT securepush.work_left()")
        let history: Int64 = try await scalar("SELECT count(*)::bigint FROM securepush.delivery_log")
        #expect(left == 0, "nothing pending, claimed or awaiting its fan-out", sourceLocation: sourceLocation)
        #expect(history == logged, "every delivery has exactly one outcome", sourceLocation: sourceLocation)
    }

    /// Polls `condition` every 20 ms until it holds or `timeout` passes (then throws).
    public func eventually(
        _ what: String,
        timeout: Duration = .seconds(20),
        _ condition: @Sendable () async throws -> Bool
    ) async throws {
        try await SecurePushTestSupport.eventually(what, timeout: timeout, condition)
    }

    /// Polls until the count `query` answers is `expected` (or `timeout` passes: then throws).
    public func eventually(_ what: String, timeout: Duration = .seconds(20), count query: PostgresQuery, is expected: Int64) async throws {
        try await eventually(what, timeout: timeout) { try await scalar(query, as: Int64.self) == expected }
    }
}

/// Polls `condition` every 20 ms until it holds or `timeout` passes (then throws).
public func eventually(_ what: String, timeout: Duration = .seconds(20), _ condition: @Sendable () async throws -> Bool) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    var lastError: (any Error)?
    while clock.now < deadline {
        do {
            if try await condition() { return }
        } catch {
            // A query may fail while a test has the database's connections killed: try again.
            lastError = error
        }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw TestFailure("timed out after \(timeout) waiting for: \(what)\(lastError.map { " (last error: \(String(reflecting: $0)))" } ?? "")")
}

/// A test failure with a message.
public struct TestFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

extension DatabaseURL {
    /// The URL as text, for a child process's `DATABASE_URL`.
    public var urlString: String {
        var text = "postgres://\(username)"
        if let password { text += ":\(password)" }
        text += "@\(host):\(port)/\(database)?sslmode=disable"
        if let socketDirectory { text += "&host=\(socketDirectory)" }
        return text
    }
}

/// The `securepush` executable built next to the tests (`swift build --build-tests` builds it).
public func securepushExecutable() throws -> URL {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let binary = root.appendingPathComponent(".build/debug/securepush")
    guard FileManager.default.isExecutableFile(atPath: binary.path) else {
        throw TestFailure("\(binary.path) is missing: build with `swift build --build-tests` (ops/test does)")
    }
    return binary
}
