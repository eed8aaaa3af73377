import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import SecurePushCore

/// Sends id-only messages through FCM HTTP v1 (docs/envelopes.md), one cached OAuth access token per
/// Firebase project. A device's `project` option chooses the project (and so the service account); devices
/// without it use the first configured one.
public struct FCMProvider: PushProvider {
    public let platform: Platform = .fcm

    let configuration: FCMConfiguration
    let transport: ProviderTransport
    let tokensByProject: [String: OAuthTokenSource]

    /// Creates a provider. Throws when there is no service account, two name one project, or the CA file
    /// cannot be read.
    public init(configuration: FCMConfiguration, httpClient: HTTPClient, logger: Logger) throws {
        guard !configuration.serviceAccounts.isEmpty else { throw FCMServiceAccountError("is missing: FCM needs at least one") }
        self.configuration = configuration
        let transport = try ProviderTransport(
            httpClient: httpClient, caFile: configuration.caFile, timeout: configuration.requestTimeout, logger: logger)
        self.transport = transport
        var tokens: [String: OAuthTokenSource] = [:]
        for account in configuration.serviceAccounts {
            guard tokens[account.projectID] == nil else { throw FCMServiceAccountError("for project \(account.projectID) is given twice") }
            tokens[account.projectID] = Self.tokenSource(for: account, transport: transport, renewalMargin: configuration.tokenRenewalMargin)
        }
        self.tokensByProject = tokens
    }

    /// The access tokens of `account`: a JWT-bearer grant signed with its key, exchanged at its `token_uri`.
    static func tokenSource(for account: FCMServiceAccount, transport: ProviderTransport, renewalMargin: Duration) -> OAuthTokenSource {
        OAuthTokenSource(url: account.tokenURI, label: "FCM", transport: transport, renewalMargin: renewalMargin) {
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

    /// How many access tokens have been fetched so far, over every project.
    public var accessTokenFetches: Int {
        get async {
            var total = 0
            for tokens in tokensByProject.values { total += await tokens.fetches }
            return total
        }
    }

    public func send(_ push: Push) async -> PushResult {
        let logger = transport.logger(for: push, platform: platform)
        guard !push.target.token.isEmpty else { return .tokenInvalid(reason: "FCM registration token is empty") }
        let wire = configuration.envelope.request(for: push)
        guard let tokens = tokensByProject[configuration.envelope.project(for: push)] else {
            logger.error("FCM push has no configured service account for its project")
            return .failed(reason: "FCM project not configured")
        }
        let body = ByteBuffer(bytes: wire.body)
        return await TokenRenewal.send(
            token: { () async throws(TokenUnavailable) -> String in
                try await tokens.tokenForSend(refused: 400...401, refusal: "FCM access token refused; check the service account", logger: logger)
            },
            attempt: { accessToken in await deliver(body, path: wire.path, headers: wire.headers, accessToken: accessToken, logger: logger) },
            invalidate: { await tokens.invalidate($0) },
            stillRefused: .retry(after: nil, reason: "FCM 401 UNAUTHENTICATED", scope: .device)
        )
    }

    /// One `messages:send` call; the answer classified.
    func deliver(_ body: ByteBuffer, path: String, headers wireHeaders: [WireHeader], accessToken: String, logger: Logger) async -> ProviderVerdict {
        var headers: HTTPHeaders = ["authorization": "Bearer \(accessToken)"]
        for header in wireHeaders { headers.add(name: header.name, value: header.value) }
        let response: ProviderResponse
        do {
            response = try await transport.post(configuration.baseURL + path, headers: headers, body: body, bodyLimit: 256 * 1024, logger: logger)
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
