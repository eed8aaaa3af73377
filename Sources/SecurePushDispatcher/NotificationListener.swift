import Logging
import PostgresNIO
import SecurePushCore
import SecurePushPostgres
import ServiceLifecycle

/// Holds one dedicated LISTEN connection per process, on the writable primary, and turns NOTIFYs into
/// wake-ups.
///
/// The connection is opened by walking `DATABASE_URL`'s hosts (`DatabaseConnector`: keepalives and
/// `TCP_USER_TIMEOUT` on the socket) and probed every `probeInterval` (bounded by `probeTimeout`): a primary
/// that stops answering (frozen, or its packets dropped) or that became a standby is left within about
/// ten seconds. It reconnects with a short capped backoff and wakes the lanes right after every
/// (re)connect, so a notification sent while it was away costs nothing more than one claim.
public struct NotificationListener: Service {
    /// The channel the fan-out trigger notifies.
    public static let channel = "securepush_deliveries"

    let connector: DatabaseConnector
    let signal: WakeSignal
    let stats: DispatcherStats
    let logger: Logger
    let probeInterval: Duration
    let probeTimeout: Duration

    /// Creates a listener that connects through `connector`.
    public init(
        connector: DatabaseConnector, signal: WakeSignal, stats: DispatcherStats, logger: Logger,
        probeInterval: Duration = .seconds(3), probeTimeout: Duration = .seconds(4)
    ) {
        self.connector = connector
        self.signal = signal
        self.stats = stats
        self.logger = logger
        self.probeInterval = probeInterval
        self.probeTimeout = probeTimeout
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await self.listenForever()
        }
    }

    private func listenForever() async {
        var failures = 0
        var connectionID = 0
        while !Task.isCancelled {
            connectionID += 1
            do {
                let (connection, endpoint) = try await connector.connectPrimary(id: connectionID, logger: logger)
                let reason = await listen(on: connection, endpoint: endpoint, reconnected: connectionID > 1) {
                    failures = 0
                }
                stats.recordListenerLost()
                try? await connection.close()
                if !Task.isCancelled {
                    logger.warning("LISTEN connection lost; reconnecting", metadata: ["db.primary": "\(endpoint)", "db.reason": "\(reason)"])
                }
            } catch {
                if !Task.isCancelled {
                    logger.databaseError("LISTEN connection failed", error)
                }
            }
            guard !Task.isCancelled else { break }
            failures += 1
            // Poll meanwhile: the lanes still claim on their poll interval, and a wake-up here costs one claim.
            signal.signal()
            try? await Task.sleep(for: .milliseconds(min(1_000, 50 * (1 << min(failures, 5)))))
        }
    }

    /// LISTENs on `connection` while a probe beside it keeps answering; returns why it stopped.
    private func listen(on connection: PostgresConnection, endpoint: DatabaseURL.Endpoint, reconnected: Bool, onListening: () -> Void) async
        -> String
    {
        let (stats, signal, logger) = (self.stats, self.signal, self.logger)
        let (interval, timeout) = (probeInterval, probeTimeout)
        return await withTaskGroup(of: String.self) { group in
            group.addTask {
                do {
                    try await connection.listen(on: Self.channel) { notifications in
                        stats.recordListenerConnected()
                        logger.log(
                            level: reconnected ? .notice : .info, "listening for deliveries", metadata: ["db.primary": "\(endpoint)"])
                        signal.signal()
                        for try await _ in notifications {
                            stats.recordListenerHeard()
                            signal.signal()
                        }
                    }
                    return "the notification stream ended"
                } catch {
                    return "LISTEN failed (\(DatabaseErrorSummary(error)))"
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    guard !Task.isCancelled else { break }
                    do {
                        let role = try await withDeadline(timeout) { try await DatabaseConnector.role(of: connection, logger: logger) }
                        guard role == .primary else { return "the server is now \(role.rawValue)" }
                        stats.recordListenerHeard()
                    } catch {
                        return "no answer to a liveness probe within \(timeout) (\(DatabaseErrorSummary(error)))"
                    }
                }
                return "shutting down"
            }
            onListening()
            let reason = await group.next() ?? "shutting down"
            group.cancelAll()
            // The LISTEN child ends when the connection closes.
            try? await connection.close()
            return reason
        }
    }
}
