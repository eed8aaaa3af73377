import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import Logging
import Prometheus
import SecurePushCore
import SecurePushProviders
import SecurePushRelay
import SecurePushRelayProtocol
import SecurePushStore
import ServiceLifecycle
import UnixSignals

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
        guard refused.isEmpty, !configuration.providers.isEmpty else {
            throw ConfigurationError(
                "a relay pushes to apns, fcm and wns only (SECUREPUSH_PROVIDERS lists \(configuration.providers.map(\.rawValue).joined(separator: ","))); Web Push needs no relay: each server has its own VAPID key"
            )
        }
        let migrator = try Migrator.relay()
        let pending = try await DatabaseSession.withClient(configuration.database, logger: logger) { client in
            try await migrator.pending(client: client, logger: logger)
        }
        guard pending.isEmpty else {
            throw ConfigurationError(
                "the relay's database is not migrated (\(pending.joined(separator: ", ")) pending): run securepush relay migrate")
        }
        let httpClient = ProviderFactory.makeHTTPClient()
        // WNS channel URIs are device-supplied URLs: sent through the pinned clients of the SSRF guard.
        let pinnedClients = configuration.providers.contains(where: \.tokenIsURL) ? ProviderFactory.makePinnedClients() : nil
        do {
            try await serve(httpClient: httpClient, pinnedClients: pinnedClients, tokenKey: tokenKey, migrator: migrator)
        } catch {
            await pinnedClients?.shutdown()
            try? await httpClient.shutdown()
            throw error
        }
        await pinnedClients?.shutdown()
        try await httpClient.shutdown()
    }

    private func serve(httpClient: HTTPClient, pinnedClients: PinnedHTTPClients?, tokenKey: SymmetricKey, migrator: Migrator) async throws {
        let client = configuration.databaseURL.makeRouter(
            poolSize: configuration.databasePoolSize, logger: logger, busy: true, statementTimeout: configuration.http.databaseTimeout)
        let store = RelayStore(client: client, logger: logger)
        let providers = try ProviderFactory.makeProviders(configuration, httpClient: httpClient, pinnedClients: pinnedClients, logger: logger)
        let forwarder = RelayForwarder(providers: providers, perInstallation: configuration.relay.perInstallation, logger: logger)
        let logger = self.logger
        let api = RelayAPI(
            store: store, forwarder: forwarder, tokenKey: tokenKey,
            readiness: { try await migrator.pending(client: client, logger: logger) },
            metricsText: { LoggingBootstrap.metricsRegistry.emitToString() }, logger: logger)
        let application = Application(
            router: api.router(), configuration: .init(address: .hostname(configuration.relay.host, port: configuration.relay.port)), logger: logger)
        logger.info(
            "securepush relay serving",
            metadata: [
                "relay.platforms": "\(configuration.providers.map(\.rawValue).joined(separator: ","))",
                "relay.port": "\(configuration.relay.port)",
            ])
        let services: [any Service] = [client, RelayPruneService(store: store, logger: logger), application]
        let group = ServiceGroup(
            configuration: .init(
                services: services.map { .init(service: $0, serviceName: String(describing: type(of: $0))) },
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
