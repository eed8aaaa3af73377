import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOSSL
import SecurePushCore

/// Sends data-only, id-only messages through FCM HTTP v1 with a cached OAuth access token.
public struct FCMProvider: PushProvider {
    public let platform: Platform = .fcm

    let configuration: FCMConfiguration
    let httpClient: HTTPClient
    let logger: Logger
    let tls: TLSConfiguration
    let tokens: OAuthTokenSource

    /// Creates a provider. Throws when the CA file cannot be read.
    public init(configuration: FCMConfiguration, httpClient: HTTPClient, logger: Logger) throws {
        self.configuration = configuration
        self.httpClient = httpClient
        self.logger = logger
        self.tls = try ClientTLS.configuration(caFile: configuration.caFile)
        let account = configuration.serviceAccount
        self.tokens = OAuthTokenSource(
            url: account.tokenURI, label: "FCM", httpClient: httpClient, tls: tls,
            timeout: configuration.requestTimeout, renewalMargin: configuration.tokenRenewalMargin
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
        var logger = logger
        logger[metadataKey: "push.notification_id"] = "\(push.notificationID)"
        logger[metadataKey: "push.platform"] = "fcm"
        guard !push.target.token.isEmpty else { return .tokenInvalid(reason: "FCM registration token is empty") }
        let body = Self.messageBody(for: push)
        var renewed = false
        while true {
            let accessToken: String
            do {
                accessToken = try await tokens.token()
            } catch let error as OAuthTokenError where error.status == 400 || error.status == 401 {
                logger.error("FCM access token refused; check the service account", metadata: ["push.reason": "\(error.message)"])
                return .failed(reason: error.message)
            } catch let error as OAuthTokenError {
                return .retry(after: nil, reason: error.message)
            } catch {
                return TransportFailure.result(error, platform: "FCM token endpoint")
            }
            var request = HTTPClientRequest(url: "\(configuration.baseURL)/v1/projects/\(configuration.serviceAccount.projectID)/messages:send")
            request.method = .POST
            request.tlsConfiguration = tls
            request.headers.add(name: "authorization", value: "Bearer \(accessToken)")
            request.headers.add(name: "content-type", value: "application/json; charset=utf-8")
            request.body = .bytes(ByteBuffer(bytes: body))
            let verdict: FCMErrorClassifier.Verdict
            do {
                let response = try await httpClient.execute(request, timeout: configuration.requestTimeout.timeAmount, logger: logger)
                let responseBody = Data(try await response.body.collect(upTo: 256 * 1024).readableBytesView)
                if response.status.code == 200 {
                    let name = (try? JSONSerialization.jsonObject(with: responseBody) as? [String: Any])?["name"] as? String
                    return .sent(messageID: name)
                }
                verdict = FCMErrorClassifier.classify(
                    status: Int(response.status.code), body: responseBody,
                    retryAfter: RetryAfter.parse(response.headers.first(name: "retry-after")), quotaBackoff: configuration.quotaBackoff)
            } catch {
                return TransportFailure.result(error, platform: "FCM")
            }
            switch verdict {
            case .result(let result):
                if case .failed(let reason) = result {
                    logger.error("FCM rejected a push; fix the configuration or the request", metadata: ["push.reason": "\(reason)"])
                }
                return result
            case .renewTokenAndRetry:
                await tokens.invalidate(accessToken)
                if renewed { return .retry(after: nil, reason: "FCM 401 UNAUTHENTICATED") }
                renewed = true
            }
        }
    }
}
