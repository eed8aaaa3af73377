import Foundation
import Logging
import PostgresNIO
import SecurePushCore
import SecurePushDispatcher
import SecurePushStore
import ServiceLifecycle

/// Runs `securepush serve`: one service group holding the database client, the dispatcher
/// services and (with the API role) the HTTP server, with graceful shutdown on SIGTERM/SIGINT.
public struct SecurePushServer {
    let configuration: SecurePushConfiguration
    let logger: Logger

    /// Creates a server for a validated configuration.
    public init(configuration: SecurePushConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Runs until SIGTERM/SIGINT.
    public func run() async throws {
        let client = configuration.databaseURL.makeClient(poolSize: configuration.databasePoolSize, logger: logger)
        var services: [any Service] = [PostgresClientService(client: client)]
        if configuration.role.runsDispatcher {
            // Its own pool, so claims never queue behind API requests, with the commit mode configured.
            let dispatcherClient = configuration.databaseURL.makeClient(
                poolSize: max(4, configuration.dispatcher.lanes * 2 + 2),
                logger: logger,
                synchronousCommit: configuration.dispatcherSynchronousCommit
            )
            services.append(PostgresClientService(client: dispatcherClient))
            let assembly = try DispatcherAssembly(
                client: dispatcherClient,
                databaseURL: configuration.databaseURL,
                providers: try ProviderFactory.makeProviders(configuration, logger: logger),
                configuration: configuration.dispatcher,
                role: configuration.role.rawValue,
                logger: logger
            )
            services.append(contentsOf: assembly.services)
        }
        services.append(
            PayloadPurgeService(
                notifications: NotificationStore(client: client, logger: logger),
                afterRead: configuration.http.purgeAfterRead,
                interval: configuration.dispatcher.maintenanceInterval,
                logger: logger
            )
        )
        if configuration.role.runsAPI {
            let api = try await APIAssembly(client: client, configuration: configuration.http, logger: logger)
            services.append(api.application(host: configuration.http.host, port: configuration.http.port, logger: logger))
        }
        services.append(
            StartupCheck(client: client, configuration: configuration, logger: logger)
        )
        let group = ServiceGroup(
            configuration: .init(
                services: services.map { .init(service: $0) },
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        try await group.run()
    }
}

/// Runs a `PostgresClient`'s connection pool as a service.
public struct PostgresClientService: Service {
    /// The client.
    public let client: PostgresClient

    /// Wraps a client.
    public init(client: PostgresClient) {
        self.client = client
    }

    public func run() async throws {
        await client.run()
    }
}
