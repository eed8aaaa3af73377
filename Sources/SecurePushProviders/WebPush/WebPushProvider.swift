import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import SecurePushCore

/// Sends an encrypted `{"secureId": "<id>"}` to a Web Push subscription (RFC 8030/8291/8292).
///
/// The endpoint is attacker-supplied: only `https` endpoints are used, and the injected client
/// must be configured not to follow redirects (`ProviderFactory` does this); a 3xx is a failure.
public struct WebPushProvider: PushProvider {
    public let platform: Platform = .webpush

    let configuration: WebPushConfiguration
    let transport: ProviderTransport
    let vapid: VAPIDTokenCache

    /// Creates a provider. Throws when the CA file cannot be read.
    public init(configuration: WebPushConfiguration, httpClient: HTTPClient, logger: Logger) throws {
        self.configuration = configuration
        self.transport = try ProviderTransport(
            httpClient: httpClient, caFile: configuration.caFile, timeout: configuration.requestTimeout, logger: logger)
        self.vapid = VAPIDTokenCache(key: configuration.vapidKey, subject: configuration.subject, lifetime: configuration.vapidLifetime)
    }

    /// The plaintext every Web Push carries: only the notification id.
    public static func plaintext(for push: Push) -> Data {
        Data(#"{"secureId":"\#(push.notificationID)"}"#.utf8)
    }

    public func send(_ push: Push) async -> PushResult {
        let logger = transport.logger(for: push, platform: platform)

        guard let url = URL(string: push.target.token), url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty,
            url.user == nil, url.password == nil
        else {
            return .tokenInvalid(reason: "Web Push endpoint is not an https URL")
        }
        guard let p256dh = push.target.options["p256dh"].flatMap(Data.init(base64URLEncoded:)),
            let auth = push.target.options["auth"].flatMap(Data.init(base64URLEncoded:))
        else {
            return .tokenInvalid(reason: "Web Push subscription has no p256dh/auth keys")
        }
        let body: Data
        do {
            body = try WebPushEncryption.encrypt(Self.plaintext(for: push), userAgentPublicKey: p256dh, authSecret: auth)
        } catch {
            return .tokenInvalid(reason: "Web Push subscription keys are malformed")
        }
        let origin = "https://\(host.lowercased())" + (url.port.map { ":\($0)" } ?? "")
        let jwt: String
        do {
            jwt = try vapid.token(for: origin)
        } catch {
            logger.error("VAPID token could not be signed")
            return .failed(reason: "VAPID token could not be signed")
        }
        let ttl = max(0, Int(push.expiresAt.timeIntervalSinceNow.rounded(.down)))
        let headers: HTTPHeaders = [
            "ttl": String(ttl), "urgency": push.priority > 0 ? "high" : "normal",
            "topic": push.notificationID.uuid.uuidString.replacingOccurrences(of: "-", with: "").lowercased(),
            "content-encoding": "aes128gcm", "content-type": "application/octet-stream",
            "authorization": "vapid t=\(jwt), k=\(configuration.publicKeyBase64URL)",
        ]
        do {
            let response = try await transport.post(push.target.token, headers: headers, body: ByteBuffer(bytes: body), logger: logger)
            let result = Self.classify(status: response.status, retryAfter: response.retryAfter)
            if case .failed(let reason) = result {
                logger.error("Web Push service rejected a push", metadata: ["push.reason": "\(reason)"])
            }
            return result
        } catch {
            return TransportFailure.result(error, platform: "Web Push")
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
        case 429:
            return .retry(after: retryAfter, reason: label)
        case 500...599:
            return .retry(after: retryAfter, reason: label)
        default:
            return .failed(reason: label)
        }
    }
}
