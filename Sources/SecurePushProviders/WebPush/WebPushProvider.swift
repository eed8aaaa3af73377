import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import SecurePushCore

/// Sends an encrypted, id-only Declarative Web Push message (docs/envelopes.md) to a Web Push subscription
/// (RFC 8030/8291/8292).
///
/// The endpoint is attacker-supplied: it must pass the configuration's `PushEndpointPolicy` (https, an
/// allowed host), every address its host resolves to must be public (or in an allowed private network),
/// and the request goes to the address that was checked (`EndpointGuard`). The injected client must be
/// configured not to follow redirects (`ProviderFactory` does this); a 3xx is a failure.
public struct WebPushProvider: PushProvider {
    /// `.webpush`, or `.unifiedpush` (the same protocol to a distributor's endpoint, under its own policy).
    public let platform: Platform

    let configuration: WebPushConfiguration
    let transport: ProviderTransport
    let vapid: VAPIDTokenCache
    let endpoints: EndpointGuard

    /// Creates a provider sending through `httpClient` and `pinnedClients` (both owned by the caller),
    /// resolving endpoint hosts with `resolver`. Throws when the CA file cannot be read.
    public init(
        platform: Platform = .webpush, configuration: WebPushConfiguration, httpClient: HTTPClient, pinnedClients: PinnedHTTPClients,
        resolver: any HostResolver = SystemHostResolver(), logger: Logger
    ) throws {
        self.platform = platform
        self.configuration = configuration
        self.endpoints = EndpointGuard(
            policy: configuration.endpointPolicy, resolver: resolver, clients: pinnedClients, resolveTimeout: configuration.requestTimeout)
        self.transport = try ProviderTransport(
            httpClient: httpClient, caFile: configuration.caFile, timeout: configuration.requestTimeout, logger: logger)
        self.vapid = VAPIDTokenCache(key: configuration.vapidKey, subject: configuration.subject, lifetime: configuration.vapidLifetime)
    }

    public func send(_ push: Push) async -> PushResult {
        let logger = transport.logger(for: push, platform: platform)

        let endpoint: PushEndpoint
        switch endpoints.check(push.target.token, label: PushEndpointPolicies.label(for: platform)) {
        case .success(let checked): endpoint = checked
        case .failure(let refusal): return refusal.result
        }
        guard let p256dh = push.target.options["p256dh"].flatMap(Data.init(base64URLEncoded:)),
            let auth = push.target.options["auth"].flatMap(Data.init(base64URLEncoded:))
        else {
            return .tokenInvalid(reason: "Web Push subscription has no p256dh/auth keys")
        }
        let wire = configuration.envelope.request(for: push)
        let body: Data
        do {
            // A sealed message is padded to one size, so its length does not tell whether (or what) it previews.
            let padding = push.seal == nil ? nil : max(WebPushEnvelope.sealedBucket, wire.body.count)
            body = try WebPushEncryption.encrypt(wire.body, userAgentPublicKey: p256dh, authSecret: auth, paddedTo: padding)
        } catch {
            return .tokenInvalid(reason: "Web Push subscription keys are malformed")
        }
        let originHost = endpoint.address.map { $0.isIPv4 ? endpoint.host : "[\(endpoint.host)]" } ?? endpoint.host
        let origin = "https://\(originHost)" + (endpoint.port.map { ":\($0)" } ?? "")
        let jwt: String
        do {
            jwt = try vapid.token(for: origin)
        } catch {
            logger.error("VAPID token could not be signed")
            return .failed(reason: "VAPID token could not be signed")
        }
        var headers = HTTPHeaders()
        for header in wire.headers { headers.add(name: header.name, value: header.value) }
        headers.add(name: "content-encoding", value: "aes128gcm")
        headers.add(name: "content-type", value: "application/octet-stream")
        headers.add(name: "authorization", value: "vapid t=\(jwt), k=\(configuration.publicKeyBase64URL)")
        let route: EndpointGuard.Route
        switch await endpoints.route(endpoint, label: PushEndpointPolicies.label(for: platform), logger: logger) {
        case .success(let checked): route = checked
        case .failure(let refusal): return refusal.result
        }
        do {
            let response = try await endpoints.withClient(route, quarantined: push.quarantined, direct: transport.httpClient) { client in
                try await transport.post(push.target.token, headers: headers, body: ByteBuffer(bytes: body), client: client, logger: logger)
            }
            let result = Self.classify(status: response.status, retryAfter: response.retryAfter)
            if case .failed(let reason) = result {
                logger.error("Web Push service rejected a push", metadata: ["push.reason": "\(reason)"])
            }
            return result
        } catch {
            return TransportFailure.result(error, platform: platform == .unifiedpush ? "UnifiedPush" : "Web Push")
        }
    }

    static func classify(status: Int, retryAfter: Duration?) -> PushResult {
        let label = "Web Push \(status)"
        switch status {
        case 200...299:
            return .sent(messageID: nil)
        case 300...399:
            return .failed(reason: label + " redirect not followed")
        case 404, 410:
            return .tokenInvalid(reason: label)
        case 429, 500...599:
            // The push service throttles or fails this sender (the breaker is per endpoint host).
            return .retry(after: retryAfter, reason: label, scope: .provider)
        default:
            return .failed(reason: label)
        }
    }
}
