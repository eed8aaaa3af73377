import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import SecurePushCore

/// Sends WNS raw notifications whose body is the notification id (docs/envelopes.md), with one cached
/// access token per app. A device's `app` option chooses the app; devices without it use the first one.
public struct WNSProvider: PushProvider {
    public let platform: Platform = .wns

    let configuration: WNSConfiguration
    let transport: ProviderTransport
    /// One token source per app, in `configuration.apps` order.
    let tokens: [OAuthTokenSource]
    let appIndexByName: [String: Int]
    let endpoints: EndpointGuard

    /// Creates a provider sending through `httpClient` and `pinnedClients` (both owned by the caller),
    /// resolving channel hosts with `resolver`. Throws when there is no app, two apps share a name, or the
    /// CA file cannot be read.
    public init(
        configuration: WNSConfiguration, httpClient: HTTPClient, pinnedClients: PinnedHTTPClients,
        resolver: any HostResolver = SystemHostResolver(), logger: Logger
    ) throws {
        self.configuration = configuration
        self.endpoints = EndpointGuard(
            policy: configuration.endpointPolicy, resolver: resolver, clients: pinnedClients, resolveTimeout: configuration.requestTimeout)
        guard !configuration.apps.isEmpty else { throw WNSProviderError("WNS needs at least one app (client id and secret)") }
        let transport = try ProviderTransport(
            httpClient: httpClient, caFile: configuration.caFile, timeout: configuration.requestTimeout, logger: logger)
        self.transport = transport
        var indexByName: [String: Int] = [:]
        for (index, app) in configuration.apps.enumerated() {
            guard let name = app.name else { continue }
            guard indexByName[name] == nil else { throw WNSProviderError("WNS app \(name) is configured twice") }
            indexByName[name] = index
        }
        self.appIndexByName = indexByName
        self.tokens = configuration.apps.map { app in
            let form = OAuthTokenSource.formEncode([
                ("grant_type", "client_credentials"), ("client_id", app.clientID), ("client_secret", app.clientSecret), ("scope", app.scope),
            ])
            return OAuthTokenSource(url: app.tokenURL, label: "WNS", transport: transport, renewalMargin: .seconds(300)) { form }
        }
    }

    /// How many access tokens have been fetched so far, over every app.
    public var accessTokenFetches: Int {
        get async {
            var total = 0
            for source in tokens { total += await source.fetches }
            return total
        }
    }

    /// The token source of the app `push` goes through: its `app` option, else the first app.
    func tokenSource(for push: Push) -> OAuthTokenSource? {
        guard let name = push.target.options[WNSConfiguration.appOption] else { return tokens.first }
        return appIndexByName[name].map { tokens[$0] }
    }

    /// Whether `channelURI` passes the endpoint policy before resolution: https, an allowed host, and
    /// a public (or allowed) address when the host is an IP literal.
    public func isAllowedChannel(_ channelURI: String) -> Bool {
        (try? configuration.endpointPolicy.check(channelURI)) != nil
    }

    public func send(_ push: Push) async -> PushResult {
        let logger = transport.logger(for: push, platform: platform)
        guard let tokens = tokenSource(for: push) else {
            logger.error("WNS push names an app that is not configured")
            return .failed(reason: "WNS app not configured")
        }
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
        let wire = configuration.envelope.request(for: push)
        return await TokenRenewal.send(
            token: { () async throws(TokenUnavailable) -> String in
                try await tokens.tokenForSend(refused: 400...403, refusal: "WNS access token refused; check the client id and secret", logger: logger)
            },
            attempt: { accessToken in
                await deliver(wire, route: route, quarantined: push.quarantined, accessToken: accessToken, logger: logger)
            },
            invalidate: { await tokens.invalidate($0) },
            stillRefused: .retry(after: nil, reason: "WNS 401", scope: .device)
        )
    }

    /// One raw notification to the channel (`wire.path`), through the client `route` names (apart from others'
    /// when `quarantined`); the answer classified.
    func deliver(
        _ wire: WireRequest, route: EndpointGuard.Route, quarantined: Bool, accessToken: String, logger: Logger
    ) async -> ProviderVerdict {
        var headers: HTTPHeaders = ["authorization": "Bearer \(accessToken)"]
        for header in wire.headers { headers.add(name: header.name, value: header.value) }
        let response: ProviderResponse
        do {
            response = try await endpoints.withClient(route, quarantined: quarantined, direct: transport.httpClient) { client in
                try await transport.post(wire.path, headers: headers, body: ByteBuffer(bytes: wire.body), client: client, logger: logger)
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

/// A WNS provider could not be created; the message names what is wrong, never a secret.
public struct WNSProviderError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public var message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}
