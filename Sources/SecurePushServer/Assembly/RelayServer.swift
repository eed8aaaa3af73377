import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import Logging
import Prometheus
import SecurePushAPI
import SecurePushCore
import SecurePushPostgres
import SecurePushProviders
import SecurePushRelay
import SecurePushRelayProtocol
import SecurePushStore
import ServiceLifecycle

/// Runs `securepush serve --role relay`: the relay API on `SECUREPUSH_RELAY_HOST:SECUREPUSH_RELAY_PORT`
/// (with its operations routes), the vendor's providers, and the relay's own database (`sql/relay/`).
struct RelayServer {
    let configuration: SecurePushConfiguration
    let logger: Logger

    func run() async throws {
        guard let tokenKey = configuration.relay.tokenKey else {
            throw ConfigurationError("the relay role needs SECUREPUSH_RELAY_TOKEN_KEY_FILE")
        }
        let refused = configuration.providers.filter { !RelayPush.relayedPlatforms.contains($0) }
        guard (refused.isEmpty && !configuration.providers.isEmpty) || configuration.providers == [.simulated] else {
            throw ConfigurationError(
                "a relay pushes to apns, fcm and wns only, or to simulated alone for a local try (SECUREPUSH_PROVIDERS lists \(configuration.providers.map(\.rawValue).joined(separator: ","))); Web Push needs no relay: each server has its own VAPID key"
            )
        }
        let migrator = try RelayMigrations.migrator()
        try await StartupWait(limit: configuration.database.startupWait).withDatabase(configuration.database, logger: logger) { client in
            try StartupNotReady.unlessMigrated(
                try await migrator.pending(client: client, logger: logger), database: "the relay's database", command: "securepush relay migrate")
        }
        try await ProviderFactory.withClients(for: configuration.providers) { httpClient, pinnedClients in
            try await serve(httpClient: httpClient, pinnedClients: pinnedClients, tokenKey: tokenKey, migrator: migrator)
        }
    }

    private func serve(httpClient: HTTPClient?, pinnedClients: PinnedHTTPClients?, tokenKey: SymmetricKey, migrator: Migrator) async throws {
        let relayListener = ListenerCheck.Listener(
            host: configuration.relay.host, port: configuration.relay.port, settings: "SECUREPUSH_RELAY_HOST, SECUREPUSH_RELAY_PORT")
        try await ListenerCheck.ensureFree([relayListener] + [configuration.http.operationsListener].compactMap { $0 })
        // Request ids and usage counters commit asynchronously (a crash can forget the last fraction of a second:
        // a request id then replayable within its token's minute, a few pushes uncounted); token bindings commit
        // synchronously (`RelayStore.bind`). Two flushes per request were most of the relay's added latency.
        let client = configuration.databaseURL.makeRouter(
            poolSize: configuration.databasePoolSize, logger: logger, synchronousCommit: false, busy: true,
            statementTimeout: configuration.http.databaseTimeout)
        let store = RelayStore(client: client, logger: logger)
        let made = try ProviderFactory.makeProviders(configuration, httpClient: httpClient, pinnedClients: pinnedClients, logger: logger)
        // `simulated` alone (a local try, the README's tour): every relayed platform's pushes go to the outbox.
        let providers: [Platform: any PushProvider] =
            configuration.providers == [.simulated]
            ? Dictionary(uniqueKeysWithValues: RelayPush.relayedPlatforms.map { ($0, made[0]) })
            : Dictionary(made.map { ($0.platform, $0) }, uniquingKeysWith: { first, _ in first })
        let forwarder = RelayForwarder(providers: providers, perInstallation: configuration.relay.perInstallation, logger: logger)
        let logger = self.logger
        let usage = RelayUsage(store: store, logger: logger)
        var limits = configuration.relay.limits
        limits.trustedProxies = configuration.http.limits.trustedProxies
        limits.bodyReadTimeout = configuration.http.limits.bodyReadTimeout
        let api = RelayAPI(
            store: store, forwarder: forwarder, tokenKey: tokenKey, usage: usage, limits: limits,
            readiness: { try await migrator.pending(client: client, logger: logger) },
            metricsText: { MetricsHelp.annotate(LoggingBootstrap.metricsRegistry.emitToString()) }, logger: logger)
        // With SECUREPUSH_OPS_PORT, the operations routes have a listener of their own, as every other role's.
        let relayAddress = BindAddress.hostname(configuration.relay.host, port: configuration.relay.port)
        var applications: [any Service] = []
        // The installations' listener has the API's connection guard and HTTP limits (issue 48: 20,000 idle
        // connections held it, half-sent requests stayed open).
        let httpLimits = configuration.http.limits
        if let operations = configuration.http.operations {
            applications.append(GuardedApplication.make(router: api.router(.relay), address: relayAddress, limits: httpLimits, logger: logger))
            applications.append(
                GuardedApplication.make(
                    router: api.router(.operations), address: .hostname(operations.host, port: operations.port), limits: httpLimits, logger: logger))
        } else {
            applications.append(GuardedApplication.make(router: api.router(), address: relayAddress, limits: httpLimits, logger: logger))
        }
        logger.info(
            "securepush relay serving",
            metadata: [
                "relay.platforms": "\(configuration.providers.map(\.rawValue).joined(separator: ","))",
                "relay.port": "\(configuration.relay.port)",
            ])
        let services: [any Service] =
            [
                client, usage, RelayPruneService(store: store, logger: logger),
                RelayStatsService(store: store, interval: configuration.http.fetchStatsInterval, logger: logger),
            ] + applications
        try await ServiceGroup.runNamed(services, logger: logger)
    }
}
