import Logging
import PostgresNIO
import SecurePushStore
import ServiceLifecycle

/// Holds one dedicated LISTEN connection per process and turns NOTIFYs into wake-ups.
///
/// Reconnects with capped exponential backoff and wakes the lanes right after every (re)connect,
/// so a notification sent while it was disconnected costs nothing more than one claim.
public struct NotificationListener: Service {
    /// The channel the fan-out trigger notifies.
    public static let channel = "securepush_deliveries"

    let configuration: PostgresConnection.Configuration
    let signal: WakeSignal
    let stats: DispatcherStats
    let logger: Logger

    /// Creates a listener for a dedicated connection.
    public init(configuration: PostgresConnection.Configuration, signal: WakeSignal, stats: DispatcherStats, logger: Logger) {
        self.configuration = configuration
        self.signal = signal
        self.stats = stats
        self.logger = logger
    }

    public func run() async throws {
        try await cancelWhenGracefulShutdown {
            await self.listenForever()
        }
    }

    private func listenForever() async {
        var failures = 0
        var connectionID = 0
        while !Task.isCancelled {
            connectionID += 1
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: configuration,
                    id: connectionID,
                    logger: logger
                )
                do {
                    try await connection.listen(on: Self.channel) { notifications in
                        failures = 0
                        stats.recordListenerConnected()
                        logger.debug("listening for deliveries")
                        signal.signal()
                        for try await _ in notifications {
                            signal.signal()
                        }
                    }
                } catch {
                    if !Task.isCancelled {
                        logger.databaseError("LISTEN connection lost", error)
                    }
                }
                try? await connection.close()
            } catch {
                if !Task.isCancelled {
                    logger.databaseError("LISTEN connection failed", error)
                }
            }
            guard !Task.isCancelled else { break }
            failures += 1
            // Poll meanwhile: the lanes still claim on their poll interval, and a wake-up here costs one claim.
            signal.signal()
            try? await Task.sleep(for: .milliseconds(min(10_000, 50 * (1 << min(failures, 8)))))
        }
    }
}
