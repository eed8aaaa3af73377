import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO

/// The row's database, reached with short-lived connections of the driver's own (never a pool: during
/// an outage or while the slots are taken, a call fails instead of waiting).
///
/// The URL may name several hosts as libpq does (`postgres://u:p@h1:p1,h2:p2/db?target_session_attrs=read-write`):
/// they are tried in order, and with `target_session_attrs=read-write` (or `primary`) a server in recovery is
/// skipped. Each host gets its own deadline, so a frozen or cut-off server costs seconds, not a hang.
struct ChaosDatabase: Sendable {
    let url: String
    /// One configuration per host, in the URL's order.
    let configurations: [PostgresConnection.Configuration]
    /// Whether a server in recovery is skipped (`target_session_attrs=read-write` or `primary`).
    let readWrite: Bool
    let logger: Logger

    /// The first host's configuration.
    var configuration: PostgresConnection.Configuration { configurations[0] }

    /// Parses `postgres://user[:password]@host[:port][,host[:port]...]/database[?query]`.
    init(url: String) throws {
        let parsed = try DatabaseURLParts(url)
        self.url = url
        self.configurations = parsed.hosts.map { host, port in
            PostgresConnection.Configuration(
                host: host, port: port, username: parsed.user, password: parsed.password, database: parsed.database, tls: .disable)
        }
        self.readWrite = ["read-write", "primary"].contains(parsed.query["target_session_attrs"] ?? "")
        var logger = Logger(label: "chaos.db")
        logger.logLevel = .critical
        self.logger = logger
    }

    /// A new connection (to a primary when the URL asks for read-write), within `timeout` per host.
    func connect(timeout: Duration = .seconds(5)) async throws -> PostgresConnection {
        let perHost = configurations.count > 1 ? min(timeout, .seconds(2)) : timeout
        var lastError: any Error = ChaosError("no host in \(url)")
        for configuration in configurations {
            let logger = self.logger
            do {
                let connection = try await withDeadline(perHost, abandoned: { (late: PostgresConnection) in Task { try? await late.close() } }) {
                    try await PostgresConnection.connect(configuration: configuration, id: Int.random(in: 1...Int(Int32.max)), logger: logger)
                }
                guard readWrite else { return connection }
                let inRecovery: Bool
                do {
                    inRecovery = try await withDeadline(perHost) {
                        try await connection.query("SELECT pg_is_in_recovery()", logger: logger).collect().first?.decode(Bool.self) ?? true
                    }
                } catch {
                    Task { try? await connection.close() }
                    throw error
                }
                if !inRecovery { return connection }
                Task { try? await connection.close() }
                lastError = ChaosError("\(configuration.host ?? "?"):\(configuration.port ?? 0) is in recovery")
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    /// Runs `body` on a new connection and closes it.
    func with<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        let connection = try await connect()
        do {
            let result = try await body(connection)
            try? await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// The first column of the first row.
    func scalar<T: PostgresDecodable & Sendable>(_ query: PostgresQuery, as type: T.Type = T.self) async throws -> T {
        try await with { connection in
            let rows = try await connection.query(query, logger: logger)
            for try await value in rows.decode(T.self) { return value }
            throw ChaosError("the query returned no row")
        }
    }

    /// Runs a statement.
    func execute(_ query: PostgresQuery) async throws {
        try await with { connection in _ = try await connection.query(query, logger: logger).collect() }
    }

    /// Polls `condition` until it holds or `timeout` passes; returns whether it held.
    func eventually(timeout: Duration, every interval: Duration = .milliseconds(250), _ condition: () async throws -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if (try? await condition()) == true { return true }
            try? await Task.sleep(for: interval)
        }
        return (try? await condition()) == true
    }
}

/// Runs `body`, failing with a timeout error when it takes longer than `timeout`.
func withTimeout<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw ChaosError("timed out after \(timeout)") }
        return value
    }
}

/// Runs `body` in a task of its own and returns its result, or throws once `timeout` passed. Unlike
/// `withTimeout`, it does not wait for a body that ignores cancellation (a query to a frozen server, a
/// connection whose peer's packets are dropped): that task is left to finish on its own, and its late
/// result, if any, goes to `abandoned` (to close a connection nobody will use).
func withDeadline<T: Sendable>(
    _ timeout: Duration, abandoned: (@Sendable (T) -> Void)? = nil, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let once = OneShot<T>()
    return try await withCheckedThrowingContinuation { continuation in
        once.set(continuation)
        Task {
            do {
                let value = try await body()
                if !once.resume(with: .success(value)) { abandoned?(value) }
            } catch {
                _ = once.resume(with: .failure(error))
            }
        }
        Task {
            try? await Task.sleep(for: timeout)
            _ = once.resume(with: .failure(ChaosError("timed out after \(timeout)")))
        }
    }
}

/// A continuation resumed at most once, by whichever of several tasks comes first.
private final class OneShot<T: Sendable>: Sendable {
    private let slot = NIOLockedValueBox<CheckedContinuation<T, any Error>?>(nil)

    func set(_ continuation: CheckedContinuation<T, any Error>) { slot.withLockedValue { $0 = continuation } }

    /// Resumes the continuation unless another call did; returns whether this one did.
    func resume(with result: Result<T, any Error>) -> Bool {
        guard let continuation = slot.withLockedValue({ $0.take() }) else { return false }
        continuation.resume(with: result)
        return true
    }
}

/// The parts of a PostgreSQL URL, with libpq's comma-separated host list (`h1:p1,h2:p2`).
struct DatabaseURLParts: Sendable {
    var user: String
    var password: String?
    var hosts: [(host: String, port: Int)]
    var database: String
    var query: [String: String]

    init(_ url: String) throws {
        var rest = Substring(url)
        guard let scheme = rest.range(of: "://"), ["postgres", "postgresql"].contains(rest[..<scheme.lowerBound]) else {
            throw ChaosError("cannot read the database URL (postgres://user:password@host:port[,host:port...]/database)")
        }
        rest = rest[scheme.upperBound...]
        query = [:]
        if let mark = rest.firstIndex(of: "?") {
            for item in rest[rest.index(after: mark)...].split(separator: "&") {
                let pair = item.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
                query[pair[0]] = pair.count > 1 ? pair[1] : ""
            }
            rest = rest[..<mark]
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        database = slash < rest.endIndex ? String(rest[rest.index(after: slash)...]).removingPercentEncoding ?? "" : ""
        var hostList = authority
        user = "postgres"
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            hostList = authority[authority.index(after: at)...]
            let parts = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map {
                String($0).removingPercentEncoding ?? String($0)
            }
            user = parts[0]
            password = parts.count > 1 ? parts[1] : nil
        }
        if database.isEmpty { database = user }
        hosts = []
        for entry in hostList.split(separator: ",") {
            var host = String(entry)
            var port = 5432
            if host.hasPrefix("["), let close = host.firstIndex(of: "]") {  // [::1]:5432
                let after = host[host.index(after: close)...]
                if after.hasPrefix(":") { port = Int(after.dropFirst()) ?? -1 }
                host = String(host[host.index(after: host.startIndex)..<close])
            } else if let colon = host.lastIndex(of: ":") {
                port = Int(host[host.index(after: colon)...]) ?? -1
                host = String(host[..<colon])
            }
            guard !host.isEmpty, (1...65535).contains(port) else { throw ChaosError("cannot read the host list of the database URL") }
            hosts.append((host, port))
        }
        guard !hosts.isEmpty else { throw ChaosError("the database URL names no host") }
    }
}
