import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import SecurePushCore

/// Sends id-only pushes to APNs over HTTP/2 with token (JWT) authentication.
///
/// All sends share the injected `HTTPClient`, which multiplexes them on HTTP/2 connections.
/// APNs allows one team per connection, so each team's requests carry their own TLS configuration,
/// which gives them their own connection pool inside the client.
public struct APNsProvider: PushProvider {
    public let platform: Platform = .apns

    let configuration: APNsConfiguration
    let transport: ProviderTransport
    let tokens: APNsTokenCache
    let appsByTopic: [String: APNsConfiguration.App]
    let tlsByTeam: [String: TLSConfiguration]

    /// Creates a provider. Throws when no app is configured or the CA file cannot be read.
    public init(configuration: APNsConfiguration, httpClient: HTTPClient, logger: Logger) throws {
        guard !configuration.apps.isEmpty else { throw APNsProviderError("APNs needs at least one app (topic, team id, key id, key)") }
        self.configuration = configuration
        // No transport-wide TLS: each request carries its team's (see `tlsByTeam`).
        self.transport = ProviderTransport(httpClient: httpClient, tls: nil, timeout: configuration.requestTimeout, logger: logger)
        self.tokens = APNsTokenCache(lifetime: configuration.tokenLifetime)
        var apps: [String: APNsConfiguration.App] = [:]
        var tls: [String: TLSConfiguration] = [:]
        for app in configuration.apps {
            apps[app.topic] = apps[app.topic] ?? app
            if tls[app.teamID] == nil {
                do {
                    tls[app.teamID] = try ClientTLS.configuration(caFile: configuration.caFile, partition: "apns-team-\(app.teamID)")
                } catch {
                    throw APNsProviderError("APNs CA file cannot be read as PEM certificates")
                }
            }
        }
        self.appsByTopic = apps
        self.tlsByTeam = tls
    }

    public func send(_ push: Push) async -> PushResult {
        let logger = transport.logger(for: push, platform: platform)
        guard Self.isHexToken(push.target.token) else {
            return .tokenInvalid(reason: "APNs device token is not hexadecimal")
        }
        let wire = configuration.envelope.request(for: push)
        guard let topic = wire.header("apns-topic"), let app = appsByTopic[topic] else {
            logger.error("APNs push has no configured app for its topic")
            return .failed(reason: "APNs topic not configured")
        }
        let baseURL: String
        switch push.target.options["environment"]?.lowercased() {
        case nil, "", "production":
            baseURL = configuration.productionBaseURL
        case "sandbox", "development":
            baseURL = configuration.sandboxBaseURL
        default:
            return .failed(reason: "APNs device has an unknown environment")
        }

        return await TokenRenewal.send(
            token: { () throws(TokenUnavailable) -> String in
                do {
                    return try tokens.token(for: app)
                } catch {
                    logger.error("APNs provider token could not be signed")
                    throw TokenUnavailable(result: .failed(reason: "APNs provider token could not be signed"))
                }
            },
            attempt: { jwt in await execute(wire, baseURL: baseURL, app: app, jwt: jwt, logger: logger) },
            invalidate: { tokens.invalidate($0, for: app) },
            stillRefused: .retry(after: nil, reason: "APNs 403 ExpiredProviderToken", scope: .device),
            renewing: { logger.notice("APNs rejected the provider token as expired; renewing it") }
        )
    }

    func execute(_ wire: WireRequest, baseURL: String, app: APNsConfiguration.App, jwt: String, logger: Logger) async -> ProviderVerdict {
        var headers: HTTPHeaders = ["authorization": "bearer \(jwt)"]
        for header in wire.headers {
            headers.add(name: header.name, value: header.value)
        }
        headers.add(name: "content-type", value: "application/json")
        do {
            let response = try await transport.post(
                baseURL + wire.path, headers: headers, body: ByteBuffer(bytes: wire.body), tls: tlsByTeam[app.teamID], logger: logger)
            let verdict = APNsResponseClassifier.classify(
                status: response.status,
                reason: response.status == 200 ? nil : Self.reason(in: response.body),
                retryAfter: response.retryAfter,
                apnsID: response.headers.first(name: "apns-id")
            )
            if case .result(.failed(let text)) = verdict, APNsResponseClassifier.isConfigurationProblem(status: response.status) {
                logger.error("APNs rejected a push; fix the configuration or the request", metadata: ["push.reason": "\(text)"])
            }
            return verdict
        } catch {
            logger.debug("APNs request failed", metadata: ["push.error": "\(String(describing: type(of: error)))"])
            return .result(TransportFailure.result(error, platform: "APNs"))
        }
    }

    static func reason(in body: ByteBuffer) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any] else { return nil }
        return object["reason"] as? String
    }

    static func isHexToken(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) }
    }
}

/// An APNs provider could not be created; the message names what is missing, never a secret.
public struct APNsProviderError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public var message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}
