import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import SecurePushCore

/// Sends WNS raw notifications whose body is the notification id, with a cached access token.
public struct WNSProvider: PushProvider {
    public let platform: Platform = .wns

    let configuration: WNSConfiguration
    let transport: ProviderTransport
    let tokens: OAuthTokenSource
    let endpoints: EndpointGuard

    /// Creates a provider sending through `httpClient` and `pinnedClients` (both owned by the caller),
    /// resolving channel hosts with `resolver`. Throws when the CA file cannot be read.
    public init(
        configuration: WNSConfiguration, httpClient: HTTPClient, pinnedClients: PinnedHTTPClients,
        resolver: any HostResolver = SystemHostResolver(), logger: Logger
    ) throws {
        self.configuration = configuration
        self.endpoints = EndpointGuard(
            policy: configuration.endpointPolicy, resolver: resolver, clients: pinnedClients, resolveTimeout: configuration.requestTimeout)
        self.transport = try ProviderTransport(
            httpClient: httpClient, caFile: configuration.caFile, timeout: configuration.requestTimeout, logger: logger)
        let form = OAuthTokenSource.formEncode([
            ("grant_type", "client_credentials"), ("client_id", configuration.clientID),
            ("client_secret", configuration.clientSecret), ("scope", configuration.scope),
        ])
        self.tokens = OAuthTokenSource(url: configuration.tokenURL, label: "WNS", transport: transport, renewalMargin: .seconds(300)) { form }
    }

    /// How many access tokens have been fetched so far.
    public var accessTokenFetches: Int {
        get async { await tokens.fetches }
    }

    /// Whether `channelURI` passes the endpoint policy before resolution: https, an allowed host, and
    /// a public (or allowed) address when the host is an IP literal.
    public func isAllowedChannel(_ channelURI: String) -> Bool {
        (try? configuration.endpointPolicy.check(channelURI)) != nil
    }

    public func send(_ push: Push) async -> PushResult {
        let logger = transport.logger(for: push, platform: platform)
        let route: EndpointGuard.Route
        switch endpoints.check(push.target.token, label: "WNS channel URI") {
        case .success(let endpoint):
            switch await endpoints.route(endpoint, label: "WNS channel URI", logger: logger) {
            case .success(let checked): route = checked
            case .failure(let refusal): return refusal.result
            }
        case .failure(let refusal):
            return refusal.result
        }
        let body = ByteBuffer(string: push.notificationID.description)
        let ttl = max(0, Int(push.expiresAt.timeIntervalSinceNow.rounded(.down)))
        return await TokenRenewal.send(
            token: { () async throws(TokenUnavailable) -> String in
                try await tokens.tokenForSend(refused: 400...403, refusal: "WNS access token refused; check the client id and secret", logger: logger)
            },
            attempt: { accessToken in
                await deliver(body, ttl: ttl, to: push.target.token, route: route, accessToken: accessToken, logger: logger)
            },
            invalidate: { await tokens.invalidate($0) },
            stillRefused: .retry(after: nil, reason: "WNS 401", scope: .device)
        )
    }

    /// One raw notification to the channel, through the client `route` names; the answer classified.
    func deliver(
        _ body: ByteBuffer, ttl: Int, to channelURI: String, route: EndpointGuard.Route, accessToken: String, logger: Logger
    ) async -> ProviderVerdict {
        let response: ProviderResponse
        do {
            response = try await endpoints.withClient(route, direct: transport.httpClient) { client in
                try await transport.post(
                    channelURI,
                    headers: [
                        "authorization": "Bearer \(accessToken)", "x-wns-type": "wns/raw", "content-type": "application/octet-stream",
                        "x-wns-ttl": String(ttl), "x-wns-cache-policy": "cache",
                    ],
                    body: body, client: client, logger: logger)
            }
        } catch {
            return .result(TransportFailure.result(error, platform: "WNS"))
        }
        let verdict = WNSResponseClassifier.classify(
            status: response.status, retryAfter: response.retryAfter, throttleBackoff: configuration.throttleBackoff,
            msgID: response.headers.first(name: "x-wns-msg-id"))
        if case .result(.failed(let reason)) = verdict {
            logger.error("WNS rejected a push", metadata: ["push.reason": "\(reason)"])
        }
        return verdict
    }
}
