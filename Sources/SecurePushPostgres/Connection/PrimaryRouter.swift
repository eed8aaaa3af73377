import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import SecurePushCore
import ServiceLifecycle

/// A pool that follows the writable primary across a failover: it walks the hosts of `DATABASE_URL`
/// (`DatabaseConnector`), runs a PostgresNIO pool against the primary it found, and watches that primary on
/// a connection of its own (dead-peer detection on the socket, a probe every `probeInterval` bounded by
/// `probeTimeout`). When the primary stops answering, or answers as a standby or read-only, or a query
/// fails the way a failover makes queries fail (read-only transaction, admin shutdown, cannot connect now,
/// a lost connection), it drops the whole pool (its connections are closed, so none lingers half-open on
/// the old primary) and walks the hosts again. Meanwhile calls wait up to `waitForPrimary` for the next primary, then fail with `NoWritablePrimary`,
/// which the API answers 503 and the dispatcher retries.
public final class PrimaryRouter: DatabaseClient, Service {
    /// What the router is connected to, for `/readyz` and `/status`.
    public struct Snapshot: Sendable {
        /// The primary's endpoint, `nil` while none is reached.
        public var primary: DatabaseURL.Endpoint?
        /// Why none is reached (the last walk's outcomes), when none is.
        public var problem: String?
        /// When the primary last answered a probe.
        public var lastHeard: Date?
        /// How many times the router has left a primary.
        public var switches: Int
    }

    private struct State {
        var client: PostgresClient?
        var snapshot = Snapshot(primary: nil, problem: "not connected yet", lastHeard: nil, switches: 0)
    }

    let connector: DatabaseConnector
    let makeClient: @Sendable (DatabaseURL.Endpoint) -> PostgresClient
    let probeInterval: Duration
    let probeTimeout: Duration
    /// How long a call waits for a primary while none is reached before it fails.
    let waitForPrimary: Duration
    let logger: Logger
    private let state = NIOLockedValueBox(State())
    private let suspicion = WakeSignal()
    /// Signalled at every walk's end (a primary found, or none).
    private let connected = WakeSignal()

    /// Creates a router; `makeClient` builds the pool for one endpoint (the process's pool settings).
    public init(
        connector: DatabaseConnector, probeInterval: Duration = .seconds(2), probeTimeout: Duration = .seconds(3),
        waitForPrimary: Duration = .seconds(2), logger: Logger,
        makeClient: @escaping @Sendable (DatabaseURL.Endpoint) -> PostgresClient
    ) {
        self.connector = connector
        self.probeInterval = probeInterval
        self.probeTimeout = probeTimeout
        self.waitForPrimary = waitForPrimary
        self.logger = logger
        self.makeClient = makeClient
    }

    /// What the router is connected to now.
    public var snapshot: Snapshot { state.withLockedValue { $0.snapshot } }

    /// Waits until a writable primary is reached; throws `NoWritablePrimary` (with the last walk's outcomes)
    /// when none is within `timeout`. For one-shot commands, which start the router and use it at once.
    public func waitForPrimary(timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if state.withLockedValue({ $0.client != nil }) { return }
            let seen = connected.generation
            if state.withLockedValue({ $0.client != nil }) { return }
            await connected.wait(since: seen, timeout: deadline - ContinuousClock.now)
        }
        _ = try currentNow()
    }

    public func run(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        let client = try await current()
        do {
            return try await client.query(query, logger: logger)
        } catch {
            reportIfFailover(error)
            throw error
        }
    }

    public func leased<Result: Sendable>(_ body: @Sendable (PostgresConnection) async throws -> Result) async throws -> Result {
        let client = try await current()
        do {
            return try await client.withConnection { connection in try await body(connection) }
        } catch {
            reportIfFailover(error)
            throw error
        }
    }

    /// Whether `error` is one a failover causes: the node became read-only or is shutting down, or the
    /// connection was lost. Such an error makes the router check its primary at once.
    public static func isFailoverSign(_ error: any Error) -> Bool {
        if let error = error as? PSQLError, let state = error.serverInfo?[.sqlState] {
            return state == "25006" || state == "57P01" || state == "57P02" || state == "57P03" || state.hasPrefix("08")
        }
        return DatabaseErrorSummary.isUnavailable(error) && !(error is NoWritablePrimary)
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await self.followPrimary()
        }
        state.withLockedValue { $0.client = nil }
    }

    // MARK: Internals

    /// The pool on the primary; while none is reached, waits up to `waitForPrimary` (a failover's gap, or
    /// the start of the process) and then throws `NoWritablePrimary`.
    private func current() async throws -> PostgresClient {
        if let client = state.withLockedValue({ $0.client }) { return client }
        try await waitForPrimary(timeout: waitForPrimary)
        return try currentNow()
    }

    private func currentNow() throws -> PostgresClient {
        let (client, problem) = state.withLockedValue { ($0.client, $0.snapshot.problem) }
        guard let client else { throw NoWritablePrimary(outcomes: [problem ?? "not connected yet"]) }
        return client
    }

    private func reportIfFailover(_ error: any Error) {
        if Self.isFailoverSign(error) { suspicion.signal() }
    }

    private func followPrimary() async {
        var failures = 0
        var connectionID = 0
        var lastProblem: String?
        while !Task.isCancelled {
            connectionID += 1
            let monitor: PostgresConnection
            let endpoint: DatabaseURL.Endpoint
            do {
                (monitor, endpoint) = try await connector.connectPrimary(id: connectionID, logger: logger)
            } catch {
                // The hosts' outcomes (`currentNow` names them in its own `NoWritablePrimary`).
                let problem = ((error as? NoWritablePrimary)?.outcomes ?? ["\(DatabaseErrorSummary(error))"]).joined(separator: "; ")
                state.withLockedValue { $0.snapshot.problem = problem }
                connected.signal()
                if problem != lastProblem {
                    logger.warning("no writable primary reached; retrying", metadata: ["db.problem": "\(NoWritablePrimary(outcomes: [problem]))"])
                    lastProblem = problem
                }
                failures += 1
                try? await Task.sleep(for: .milliseconds(min(1000, 50 << min(failures, 5))))
                continue
            }
            failures = 0
            lastProblem = nil
            let client = makeClient(endpoint)
            await withDiscardingTaskGroup { group in
                group.addTask { await client.run() }
                let switches = state.withLockedValue { state in
                    state.client = client
                    state.snapshot = Snapshot(primary: endpoint, problem: nil, lastHeard: Date(), switches: state.snapshot.switches)
                    return state.snapshot.switches
                }
                connected.signal()
                logger.notice(
                    "connected to the writable primary", metadata: ["db.primary": "\(endpoint)", "db.primary_switches": "\(switches)"])
                let reason = await watch(monitor)
                state.withLockedValue { state in
                    state.client = nil
                    state.snapshot.primary = nil
                    state.snapshot.problem = reason
                    state.snapshot.switches += 1
                }
                if !Task.isCancelled {
                    logger.warning(
                        "left the primary; looking for the writable primary", metadata: ["db.primary": "\(endpoint)", "db.reason": "\(reason)"])
                }
                group.cancelAll()
            }
            try? await monitor.close()
        }
    }

    /// Probes the primary until it is lost; returns why.
    private func watch(_ monitor: PostgresConnection) async -> String {
        let (timeout, logger) = (probeTimeout, self.logger)
        while !Task.isCancelled {
            let seen = suspicion.generation
            do {
                let role = try await withDeadline(timeout) { try await DatabaseConnector.role(of: monitor, logger: logger) }
                guard role == .primary else { return "the primary is now \(role.rawValue)" }
                state.withLockedValue { $0.snapshot.lastHeard = Date() }
            } catch {
                return "the primary did not answer a probe within \(timeout) (\(DatabaseErrorSummary(error)))"
            }
            await suspicion.wait(since: seen, timeout: probeInterval)
        }
        return "shutting down"
    }
}
