import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import SecurePushCore

/// Sends data-only, id-only messages through FCM HTTP v1 with a cached OAuth access token.
public struct FCMProvider: PushProvider {
    public let platform: Platform = .fcm

    let configuration: FCMConfiguration
    let transport: ProviderTransport
    let tokens: OAuthTokenSource

    /// Creates a provider. Throws when the CA file cannot be read.
    public init(configuration: FCMConfiguration, httpClient: HTTPClient, logger: Logger) throws {
        self.configuration = configuration
        self.transport = try ProviderTransport(
            httpClient: httpClient, caFile: configuration.caFile, timeout: configuration.requestTimeout, logger: logger)
        let account = configuration.serviceAccount
        self.tokens = OAuthTokenSource(
            url: account.tokenURI, label: "FCM", transport: transport, renewalMargin: configuration.tokenRenewalMargin
        ) {
            let now = Int(Date().timeIntervalSince1970)
            var header = ["alg": "RS256", "typ": "JWT"]
            if let kid = account.privateKeyID { header["kid"] = kid }
            let assertion = try CompactJWT.rs256(
                header: header,
                claims: ["iss": account.clientEmail, "scope": FCMConfiguration.scope, "aud": account.tokenURI, "iat": now, "exp": now + 3600],
                key: account.privateKey
            )
            return OAuthTokenSource.formEncode([("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"), ("assertion", assertion)])
        }
    }

    /// How many access tokens have been fetched so far.
    public var accessTokenFetches: Int {
        get async { await tokens.fetches }
    }

    /// The JSON body of the message for `push`: data-only, carrying just the id.
    public static func messageBody(for push: Push, now: Date = Date()) -> Data {
        let id = push.notificationID.description
        let ttl = max(0, Int(push.expiresAt.timeIntervalSince(now).rounded(.down)))
        let message: [String: Any] = [
            "message": [
                "token": push.target.token,
                "data": ["secureId": id],
                "android": ["priority": "high", "ttl": "\(ttl)s", "collapse_key": id],
            ]
        ]
        return (try? JSONSerialization.data(withJSONObject: message, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
    }

    public func send(_ push: Push) async -> PushResult {
        let logger = transport.logger(for: push, platform: platform)
        guard !push.target.token.isEmpty else { return .tokenInvalid(reason: "FCM registration token is empty") }
        let body = ByteBuffer(bytes: Self.messageBody(for: push))
        return await TokenRenewal.send(
            token: { () async throws(TokenUnavailable) -> String in
                try await tokens.tokenForSend(refused: 400...401, refusal: "FCM access token refused; check the service account", logger: logger)
            },
            attempt: { accessToken in await deliver(body, accessToken: accessToken, logger: logger) },
            invalidate: { await tokens.invalidate($0) },
            stillRefused: .retry(after: nil, reason: "FCM 401 UNAUTHENTICATED", scope: .device)
        )
    }

    /// One `messages:send` call; the answer classified.
    func deliver(_ body: ByteBuffer, accessToken: String, logger: Logger) async -> ProviderVerdict {
        let response: ProviderResponse
        do {
            response = try await transport.post(
                "\(configuration.baseURL)/v1/projects/\(configuration.serviceAccount.projectID)/messages:send",
                headers: ["authorization": "Bearer \(accessToken)", "content-type": "application/json; charset=utf-8"],
                body: body, bodyLimit: 256 * 1024, logger: logger)
        } catch {
            return .result(TransportFailure.result(error, platform: "FCM"))
        }
        let responseBody = Data(response.body.readableBytesView)
        if response.status == 200 {
            let name = (try? JSONSerialization.jsonObject(with: responseBody) as? [String: Any])?["name"] as? String
            return .result(.sent(messageID: name))
        }
        let verdict = FCMErrorClassifier.classify(
            status: response.status, body: responseBody, retryAfter: response.retryAfter, quotaBackoff: configuration.quotaBackoff)
        if case .result(.failed(let reason)) = verdict {
            logger.error("FCM rejected a push; fix the configuration or the request", metadata: ["push.reason": "\(reason)"])
        }
        return verdict
    }
}
