import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import SecurePushCore
import SecurePushProviders
import SecurePushStore

/// Builds the push providers a configuration enables.
public enum ProviderFactory {
    /// A client configured the way the providers need it: HTTP/2 when the server offers it (ALPN), and
    /// never following redirects (Web Push and WNS URLs are device-supplied). The caller owns it and
    /// must shut it down (`SecurePushServer` does, after its services stopped).
    public static func makeHTTPClient() -> HTTPClient {
        HTTPClient(eventLoopGroupProvider: .singleton, configuration: httpClientConfiguration)
    }

    /// The configuration of `makeHTTPClient()`'s client.
    public static var httpClientConfiguration: HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.httpVersion = .automatic
        configuration.timeout.connect = .seconds(10)
        configuration.connectionPool.idleTimeout = .seconds(600)
        // No tracer, also when traces are on (SECUREPUSH_OTEL_ENDPOINT): a traced client would add a traceparent
        // header to every request to Apple, Google, Microsoft or a Web Push service (TracingTests proves none
        // does). Even the no-op tracer cost every request its span attributes: about 5 % of the client's CPU
        // per APNs push (ops/bench's APNs row under perf).
        configuration.tracing.tracer = nil
        return configuration
    }

    /// The clients Web Push and WNS send through, each connecting one device-supplied host to the address
    /// that was checked (configured like `makeHTTPClient()`'s, on the same event loop group). The caller
    /// owns them and must shut them down (`SecurePushServer` does, after its services stopped).
    ///
    /// A connection to a device-supplied endpoint fails fast: one attempt (AsyncHTTPClient otherwise retries a
    /// refused connection until the request's deadline, 10 s) within 3 s, so an endpoint that cannot be reached
    /// holds its batch for seconds at most, not the whole request timeout.
    public static func makePinnedClients(capacity: Int = 64) -> PinnedHTTPClients {
        var configuration = httpClientConfiguration
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(3)
        return PinnedHTTPClients(configuration: configuration, capacity: capacity)
    }

    /// Runs `body` with the clients the providers of `platforms` need (an HTTP client unless only `simulated`,
    /// pinned clients for device-supplied URLs), and shuts them down after it returned or threw: created
    /// before the providers that use them, shut down after the services stopped.
    static func withClients(
        for platforms: [Platform], _ body: (HTTPClient?, PinnedHTTPClients?) async throws -> Void
    ) async throws {
        let httpClient = platforms.contains { $0 != .simulated } ? makeHTTPClient() : nil
        let pinnedClients = platforms.contains(where: \.tokenIsURL) ? makePinnedClients() : nil
        do {
            try await body(httpClient, pinnedClients)
        } catch {
            await pinnedClients?.shutdown()
            await httpClient?.shutdown(within: .seconds(5))
            throw error
        }
        await pinnedClients?.shutdown()
        await httpClient?.shutdown(within: .seconds(5))
    }

    /// One provider per configured platform, real ones using `httpClient` and, for Web Push and WNS,
    /// `pinnedClients` (both owned by the caller).
    ///
    /// The platforms of `configuration.relayClient` go through `relay` (the client, and the queue of
    /// registrations still to hand over), which must then be given.
    public static func makeProviders(
        _ configuration: SecurePushConfiguration, httpClient: HTTPClient?, pinnedClients: PinnedHTTPClients? = nil,
        relay: (client: RelayClient, outbox: RelayOutboxStore)? = nil, logger: Logger
    ) throws -> [any PushProvider] {
        let settings = configuration.providerSettings
        let relayed = Set(configuration.relayClient?.platforms ?? [])
        return try configuration.providers.map { platform -> any PushProvider in
            if relayed.contains(platform) {
                guard let relay else { throw ConfigurationError("\(platform.rawValue) goes through the relay, but no relay client was given") }
                let outbox = relay.outbox
                return RelayProvider(platform: platform, client: relay.client) { platform, token in
                    // Unknown (the database unavailable) throws: the push is retried, the device kept.
                    try await outbox.isPending(platform: platform, token: token)
                }
            }
            do {
                guard platform != .simulated else {
                    let outbox = try SimulatedOutbox(path: configuration.simulatedOutboxPath)
                    let profile: any EnvelopeProfile =
                        configuration.simulatedEnvelope == .fcm
                        ? FCMEnvelope(settings: settings.envelopes, defaultProject: SimulatedProvider.project)
                        : APNsEnvelope(settings: settings.envelopes, defaultTopic: SimulatedProvider.topic)
                    return SimulatedProvider(outbox: outbox, profile: profile, latency: configuration.simulatedLatency)
                }
                return try settings.makeProvider(for: platform, httpClient: httpClient, pinnedClients: pinnedClients, logger: logger)
            } catch let error as ConfigurationError {
                throw error
            } catch let error as SimulatedOutboxError {
                throw error
            } catch {
                throw ConfigurationError("\(platform.rawValue) provider cannot start: \(error)")
            }
        }
    }
}
