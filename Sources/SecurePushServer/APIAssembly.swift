import Foundation
import Hummingbird
import Logging
import PostgresNIO
import SecurePushAPI
import SecurePushStore
import ServiceLifecycle

/// The HTTP API wired to one database client, plus its payload-purge loop.
public struct APIAssembly: Sendable {
    /// The handlers' dependencies.
    public let context: APIContext

    /// Wires the API; throws a configuration error when user tokens cannot be verified.
    public init(client: PostgresClient, configuration: HTTPConfiguration, logger: Logger) async throws {
        let migrator = Migrator(migrations: try Migration.bundled())
        self.context = APIContext(
            devices: DeviceStore(client: client, logger: logger),
            notifications: NotificationStore(client: client, logger: logger),
            status: StatusStore(client: client, staleAfter: configuration.dispatcherStaleAfter, logger: logger),
            userTokens: try await configuration.makeUserTokenVerifier(),
            pendingMigrations: { try await migrator.pending(client: client, logger: logger) },
            metricsText: { LoggingBootstrap.metricsRegistry.emitToString() }
        )
    }

    /// The Hummingbird application, bound to `host:port`.
    public func application(host: String, port: Int, logger: Logger) -> some ApplicationProtocol {
        Application(
            router: APIRouter.build(context),
            configuration: .init(address: .hostname(host, port: port), serverName: nil),
            logger: logger
        )
    }
}

/// Purges payloads of expired notifications, and of read ones after the configured time.
public struct PayloadPurgeService: Service {
    let notifications: NotificationStore
    let afterRead: Duration?
    let interval: Duration
    let logger: Logger

    /// Creates the service.
    public init(notifications: NotificationStore, afterRead: Duration?, interval: Duration, logger: Logger) {
        self.notifications = notifications
        self.afterRead = afterRead
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        try await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let purged = try await notifications.purgePayloads(afterRead: afterRead)
                    if purged > 0 { logger.info("purged payloads", metadata: ["notifications.purged": "\(purged)"]) }
                } catch {
                    logger.warning("payload purge failed", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}
