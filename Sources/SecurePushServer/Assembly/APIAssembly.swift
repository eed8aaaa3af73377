import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import PostgresNIO
import Prometheus
import SecurePushAPI
import SecurePushCore
import SecurePushPostgres
import SecurePushStore
import ServiceLifecycle

/// The HTTP API wired to one database client: every route, or (for a dispatcher-only process) the
/// operations routes alone.
public struct APIAssembly: Sendable {
    /// The handlers' dependencies.
    public var context: APIContext
    /// Whether only the operations routes are served (`/healthz`, `/readyz`, `/status`, `/metrics`).
    public var operationsOnly = false

    /// Wires the API; throws a configuration error when user tokens cannot be verified. With
    /// `operationsOnly`, no user route is served, so no user-token key is needed.
    public init(client: any DatabaseClient, configuration: SecurePushConfiguration, logger: Logger, operationsOnly: Bool = false) async throws {
        let migrator = Migrator.securePush(try Migration.bundled())
        let stores = APIStores(
            devices: DeviceStore(client: client, logger: logger),
            notifications: NotificationStore(client: client, logger: logger, readStatements: configuration.readStatements),
            preferences: PreferenceStore(client: client, logger: logger),
            status: StatusStore(
                client: client, staleAfter: configuration.database.dispatcherStaleAfter, thresholds: configuration.database.statusThresholds,
                logger: logger),
            security: SecurityStore(client: client, logger: logger),
            pendingMigrations: { try await migrator.pending(client: client, logger: logger) },
            readiness: {
                try await client.leased { connection in
                    (try await migrator.pending(on: connection, logger: logger), try await DatabaseConnector.role(of: connection, logger: logger))
                }
            }
        )
        var withSupport = stores
        withSupport.support = SupportStore(client: client, logger: logger)
        try await self.init(stores: withSupport, configuration: configuration, operationsOnly: operationsOnly)
    }

    /// Wires the API to `stores` (the SQL stores, or in a test of HTTP behaviour, stores without a database).
    public init(stores: APIStores, configuration: SecurePushConfiguration, operationsOnly: Bool = false) async throws {
        self.context = APIContext(
            stores: stores,
            userTokens: operationsOnly ? .acceptingNone() : try await configuration.http.makeUserTokenVerifier(),
            metricsText: { MetricsHelp.annotate(LoggingBootstrap.metricsRegistry.emitToString()) }
        )
        self.context.limits = configuration.http.limits
        self.context.endpointPolicies = configuration.providerSettings.endpointPolicies
        self.context.webPushPublicKey = configuration.providerSettings.vapidPublicKey
        self.context.demo = configuration.http.demo
        self.context.corsOrigins = configuration.http.corsOrigins
        self.context.databaseTimeout = configuration.http.databaseTimeout
        self.context.opsToken = configuration.http.opsToken
        self.operationsOnly = operationsOnly
    }

    /// Which routes a listener serves.
    public enum Routes: Sendable {
        /// The API's routes and the operations routes (one listener).
        case all
        /// The API's routes alone (the operations routes have a listener of their own).
        case api
        /// The operations routes alone.
        case operations
    }

    /// The Hummingbird application, bound to `host:port`, serving `routes` (by default every route, or the
    /// operations routes alone for a dispatcher-only process). Each listener has its own connection limits.
    public func application(host: String, port: Int, routes: Routes? = nil, logger: Logger) -> some ApplicationProtocol {
        let router: Router<APIRequestContext> =
            switch routes ?? (operationsOnly ? .operations : .all) {
            case .all: APIRouter.build(context)
            case .api: APIRouter.build(context, operations: false)
            case .operations: APIRouter.buildOperations(context)
            }
        return GuardedApplication.make(router: router, address: .hostname(host, port: port), limits: context.limits, logger: logger)
    }
}
