import AsyncHTTPClient
import Foundation
import Logging
import PostgresNIO
import SecurePushAPI
import SecurePushCore
import SecurePushDispatcher
import SecurePushPostgres
import SecurePushProviders
import SecurePushStore
import ServiceLifecycle

/// Runs `securepush serve`: a start-up gate, then one service group holding the database clients, the
/// dispatcher services and the HTTP server (every route with the API role, the operations routes alone for
/// a dispatcher), with graceful shutdown on SIGTERM/SIGINT.
public struct SecurePushServer {
    let configuration: SecurePushConfiguration
    let logger: Logger

    /// Creates a server for a validated configuration.
    public init(configuration: SecurePushConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Checks the configuration and the database, then runs until SIGTERM/SIGINT. Throws a
    /// `ConfigurationError` before any service starts (and before any port is bound) when the process
    /// cannot work: no push provider for a dispatcher, a provider that cannot start, a database that is
    /// missing, unreachable or not migrated.
    public func run() async throws {
        if configuration.role == .relay {
            return try await RelayServer(configuration: configuration, logger: logger).run()
        }
        if configuration.role.runsDispatcher && configuration.providers.isEmpty {
            throw ConfigurationError(
                "SECUREPUSH_PROVIDERS lists no push platform, so this dispatcher could send nothing; list at least one (for example simulated) or run with --role api"
            )
        }
        try await ProviderFactory.withClients(for: configuration.providers) { httpClient, pinnedClients in
            try await run(httpClient: httpClient, pinnedClients: pinnedClients)
        }
    }

    /// The relay client of a dispatcher that pushes through a relay, with its queue of registrations.
    private func makeRelayClient(httpClient: HTTPClient?, dispatcherClient: PrimaryRouter?) throws -> (client: RelayClient, outbox: RelayOutboxStore)?
    {
        guard let settings = configuration.relayClient, let dispatcherClient else { return nil }
        guard let httpClient else { throw ConfigurationError("the relay needs an HTTP client") }
        let client = RelayClient(
            url: settings.url, installation: settings.installation, key: settings.key, httpClient: httpClient, timeout: settings.timeout,
            logger: logger)
        return (client, RelayOutboxStore(client: dispatcherClient, logger: logger))
    }

    private func run(httpClient: HTTPClient?, pinnedClients: PinnedHTTPClients?) async throws {
        FileDescriptorLimit.raise(toFit: configuration.http.limits.maxConnections, logger: logger)
        try await ListenerCheck.ensureFree(configuration.http.listeners(servesAPI: configuration.role.runsAPI))
        // The dispatcher's own pool, so claims never queue behind API requests, with the commit mode configured
        // (made here, connecting only once it runs: the relay's provider reads its queue of registrations).
        let dispatcherClient =
            configuration.role.runsDispatcher
            ? configuration.databaseURL.makeRouter(
                poolSize: DispatcherAssembly.databasePoolSize(configuration.dispatcher), logger: logger,
                synchronousCommit: configuration.dispatcherSynchronousCommit, busy: true) : nil
        let relay = try makeRelayClient(httpClient: httpClient, dispatcherClient: dispatcherClient)
        let providers =
            configuration.role.runsDispatcher
            ? try ProviderFactory.makeProviders(
                configuration, httpClient: httpClient, pinnedClients: pinnedClients, relay: relay.map { ($0.client, $0.outbox) }, logger: logger)
            : []
        let gate = StartupGate(
            configuration: configuration.database, timeout: .seconds(10),
            relayPlatforms: configuration.role.runsDispatcher ? configuration.relayClient?.platforms ?? [] : nil, logger: logger)
        try await StartupWait(limit: configuration.database.startupWait).run(logger: logger) { try await gate.check() }

        // The API's request pool is busy; a dispatcher-only process uses this pool only for the
        // payload purge and its operations routes.
        // Each pool follows the writable primary among DATABASE_URL's hosts (`PrimaryRouter`). The server ends
        // the API pool's statements at the request deadline (SECUREPUSH_API_DB_TIMEOUT), as the client does.
        let client =
            configuration.role.runsAPI
            ? configuration.databaseURL.makeRouter(
                poolSize: configuration.databasePoolSize, logger: logger, busy: true, statementTimeout: configuration.http.databaseTimeout)
            : configuration.databaseURL.makeRouter(poolSize: 2, logger: logger)
        var services: [any Service] = []
        if let tracing = configuration.tracing {
            services.append(try tracing.bootstrap(role: configuration.role.rawValue))
        }
        services.append(client)
        if let dispatcherClient {
            services.append(dispatcherClient)
            if let relay {
                // Before the dispatcher: a service group stops its services in reverse order, so the relay
                // client answers the dispatcher's last sends.
                services.append(relay.client)
                services.append(RelaySyncService(outbox: relay.outbox, relay: relay.client, logger: logger))
            }
            let assembly = try DispatcherAssembly(
                client: dispatcherClient,
                databaseURL: configuration.databaseURL,
                providers: providers,
                configuration: configuration.dispatcher,
                role: configuration.role.rawValue,
                logger: logger
            )
            services.append(contentsOf: assembly.services)
            services.append(
                EventAnnouncer(store: EventAnnouncementStore(client: dispatcherClient, logger: logger), logger: logger))
            if let webhook = configuration.webhook {
                services.append(WebhookService(store: WebhookStore(client: dispatcherClient, logger: logger), settings: webhook, logger: logger))
            }
        }
        services.append(
            PayloadPurgeService(
                payloads: NotificationStore(client: client, logger: logger),
                afterRead: configuration.http.purgeAfterRead,
                interval: configuration.dispatcher.maintenanceInterval,
                timeout: configuration.dispatcher.databaseTimeout,
                logger: logger
            )
        )
        // Every role serves HTTP: the API role every route, a dispatcher-only process the operations
        // routes (health, readiness, status, metrics), so it can be probed and scraped.
        let api = try await APIAssembly(client: client, configuration: configuration, logger: logger, operationsOnly: !configuration.role.runsAPI)
        let http = configuration.http
        if let operations = http.operations {
            // The operations routes on a listener of their own; the API port (API roles only) answers 404 for them.
            if configuration.role.runsAPI {
                services.append(api.application(host: http.host, port: http.port, routes: .api, logger: logger))
            }
            services.append(api.application(host: operations.host, port: operations.port, routes: .operations, logger: logger))
        } else {
            services.append(api.application(host: http.host, port: http.port, logger: logger))
        }
        if configuration.role.runsAPI {
            services.append(
                FetchStatsService(
                    status: StatusStore(
                        client: client, staleAfter: configuration.database.dispatcherStaleAfter,
                        thresholds: configuration.database.statusThresholds, logger: logger),
                    registry: LoggingBootstrap.metricsRegistry,
                    interval: configuration.http.fetchStatsInterval,
                    timeout: configuration.dispatcher.databaseTimeout,
                    logger: logger
                )
            )
        }
        logger.info(
            "securepush serving",
            metadata: [
                "role": "\(configuration.role.rawValue)",
                "providers": "\(configuration.providers.map(\.rawValue).joined(separator: ","))",
            ]
        )
        try await ServiceGroup.runNamed(services, logger: logger)
    }
}
