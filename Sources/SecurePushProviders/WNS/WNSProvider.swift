import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOSSL
import SecurePushCore

/// Sends WNS raw notifications whose body is the notification id, with a cached access token.
public struct WNSProvider: PushProvider {
    public let platform: Platform = .wns

    let configuration: WNSConfiguration
    let httpClient: HTTPClient
    let logger: Logger
    let tls: TLSConfiguration
    let tokens: OAuthTokenSource

    /// Creates a provider. Throws when the CA file cannot be read.
    public init(configuration: WNSConfiguration, httpClient: HTTPClient, logger: Logger) throws {
        self.configuration = configuration
        self.httpClient = httpClient
        self.logger = logger
        self.tls = try ClientTLS.configuration(caFile: configuration.caFile)
        let form = OAuthTokenSource.formEncode([
            ("grant_type", "client_credentials"), ("client_id", configuration.clientID),
            ("client_secret", configuration.clientSecret), ("scope", configuration.scope),
        ])
        self.tokens = OAuthTokenSource(
            url: configuration.tokenURL, label: "WNS", httpClient: httpClient, tls: tls,
            timeout: configuration.requestTimeout, renewalMargin: .seconds(300)
        ) { form }
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
        var logger = logger
        logger[metadataKey: "push.notification_id"] = "\(push.notificationID)"
        logger[metadataKey: "push.platform"] = "wns"
        guard isAllowedChannel(push.target.token) else {
            return .tokenInvalid(reason: "WNS channel URI is not on an allowed host")
        }
        let body = Data(push.notificationID.description.utf8)
        let ttl = max(0, Int(push.expiresAt.timeIntervalSinceNow.rounded(.down)))
        var renewed = false
        while true {
            let accessToken: String
            do {
                accessToken = try await tokens.token()
            } catch let error as OAuthTokenError where (400...403).contains(error.status) {
                logger.error("WNS access token refused; check the client id and secret", metadata: ["push.reason": "\(error.message)"])
                return .failed(reason: error.message)
            } catch let error as OAuthTokenError {
                return .retry(after: nil, reason: error.message)
            } catch {
                return TransportFailure.result(error, platform: "WNS token endpoint")
            }
            var request = HTTPClientRequest(url: push.target.token)
            request.method = .POST
            request.tlsConfiguration = tls
            request.headers.add(name: "authorization", value: "Bearer \(accessToken)")
            request.headers.add(name: "x-wns-type", value: "wns/raw")
            request.headers.add(name: "content-type", value: "application/octet-stream")
            request.headers.add(name: "x-wns-ttl", value: String(ttl))
            request.headers.add(name: "x-wns-cache-policy", value: "cache")
            request.body = .bytes(ByteBuffer(bytes: body))
            let status: Int
            let response: HTTPClientResponse
            do {
                response = try await httpClient.execute(request, timeout: configuration.requestTimeout.timeAmount, logger: logger)
                _ = try await response.body.collect(upTo: 64 * 1024)
                status = Int(response.status.code)
            } catch {
                return TransportFailure.result(error, platform: "WNS")
            }
            let retryAfter = RetryAfter.parse(response.headers.first(name: "retry-after"))
            let label = "WNS \(status)"
            switch status {
            case 200...299:
                return .sent(messageID: response.headers.first(name: "x-wns-msg-id"))
            case 401:
                await tokens.invalidate(accessToken)
                if renewed { return .retry(after: nil, reason: label) }
                renewed = true
            case 404, 410:
                return .tokenInvalid(reason: label)
            case 406:
                return .retry(after: retryAfter ?? configuration.throttleBackoff, reason: label + " throttled")
            case 429, 500...599:
                return .retry(after: retryAfter, reason: label)
            default:
                logger.error("WNS rejected a push", metadata: ["push.reason": "\(label)"])
                return .failed(reason: label)
            }
        }
    }
}
