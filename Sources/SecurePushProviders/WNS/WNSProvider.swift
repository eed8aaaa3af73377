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

    /// Creates a provider. Throws when the CA file cannot be read.
    public init(configuration: WNSConfiguration, httpClient: HTTPClient, logger: Logger) throws {
        self.configuration = configuration
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

    /// Whether `channelURI` is an https URL on an allowed host.
    public func isAllowedChannel(_ channelURI: String) -> Bool {
        guard let url = URL(string: channelURI), url.scheme?.lowercased() == "https", let host = url.host?.lowercased(), url.user == nil else {
            return false
        }
        return configuration.allowedHostSuffixes.contains { suffix in
            let suffix = suffix.lowercased()
            return host == suffix || host.hasSuffix("." + suffix)
        }
    }

    public func send(_ push: Push) async -> PushResult {
        let logger = transport.logger(for: push, platform: platform)
        guard isAllowedChannel(push.target.token) else {
            return .tokenInvalid(reason: "WNS channel URI is not on an allowed host")
        }
        let body = ByteBuffer(string: push.notificationID.description)
        let ttl = max(0, Int(push.expiresAt.timeIntervalSinceNow.rounded(.down)))
        return await TokenRenewal.send(
            token: { () async throws(TokenUnavailable) -> String in
                try await tokens.tokenForSend(refused: 400...403, refusal: "WNS access token refused; check the client id and secret", logger: logger)
            },
            attempt: { accessToken in
                await deliver(body, ttl: ttl, to: push.target.token, accessToken: accessToken, logger: logger)
            },
            invalidate: { await tokens.invalidate($0) },
            stillRefused: .retry(after: nil, reason: "WNS 401")
        )
    }

    /// One raw notification to the channel; the answer classified.
    func deliver(_ body: ByteBuffer, ttl: Int, to channelURI: String, accessToken: String, logger: Logger) async -> ProviderVerdict {
        let response: ProviderResponse
        do {
            response = try await transport.post(
                channelURI,
                headers: [
                    "authorization": "Bearer \(accessToken)", "x-wns-type": "wns/raw", "content-type": "application/octet-stream",
                    "x-wns-ttl": String(ttl), "x-wns-cache-policy": "cache",
                ],
                body: body, logger: logger)
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
