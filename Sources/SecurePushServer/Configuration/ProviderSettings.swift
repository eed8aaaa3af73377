import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import SecurePushCore
import SecurePushProviders
import SecurePushStore

/// Credentials and endpoints of the real push platforms, read from `SECUREPUSH_APNS_*`,
/// `SECUREPUSH_FCM_*`, `SECUREPUSH_WEBPUSH_*` and `SECUREPUSH_WNS_*` (see docs/providers.md), and the
/// envelopes' generic text and style (`SECUREPUSH_ALERT_*`, `SECUREPUSH_APNS_PUSH_STYLE`, docs/envelopes.md).
///
/// Only platforms listed in `SECUREPUSH_PROVIDERS` are read; for those, a missing or unreadable
/// credential is a start-up `ConfigurationError` naming the setting (never echoing a secret). The endpoint
/// policies (`SECUREPUSH_WEBPUSH_ALLOWED_HOSTS`, `SECUREPUSH_WNS_ALLOWED_HOSTS`,
/// `SECUREPUSH_PUSH_ALLOWED_PRIVATE_NETWORKS`) are always read: the API checks registrations against them
/// without any provider credential. So are the envelope settings (the simulated platform uses them too).
public struct ProviderSettings: Sendable {
    /// APNs, when enabled.
    public var apns: APNsConfiguration?
    /// FCM HTTP v1, when enabled.
    public var fcm: FCMConfiguration?
    /// Web Push, when enabled.
    public var webPush: WebPushConfiguration?
    /// WNS, when enabled.
    public var wns: WNSConfiguration?
    /// Which Web Push endpoints and WNS channel URIs may be registered and pushed to, read whichever
    /// platforms are enabled.
    public var endpointPolicies: PushEndpointPolicies
    /// The generic text and the APNs style of every envelope, read whichever platforms are enabled.
    public var envelopes: EnvelopeSettings
    /// The VAPID public key (base64url), whenever `SECUREPUSH_WEBPUSH_VAPID_KEY_FILE` is set.
    public var vapidPublicKey: String?

    /// No real platform configured; the default endpoint policies and envelopes.
    public init() {
        endpointPolicies = PushEndpointPolicies()
        envelopes = EnvelopeSettings()
    }

    /// Reads the endpoint policies, the envelope settings and the settings of every platform in `platforms`.
    public init(values: ConfigurationValues, platforms: [Platform]) throws {
        endpointPolicies = try Self.endpointPolicies(values)
        envelopes = try Self.envelopes(values)
        if platforms.contains(.apns) { apns = try Self.apns(values, envelopes: envelopes) }
        if platforms.contains(.fcm) { fcm = try Self.fcm(values, envelopes: envelopes) }
        if platforms.contains(.webpush) || platforms.contains(.unifiedpush) {
            // UnifiedPush is Web Push with the same VAPID key and its own endpoint policy.
            webPush = try Self.webPush(values, policy: endpointPolicies.webPush, envelopes: envelopes)
            vapidPublicKey = webPush?.publicKeyBase64URL
        } else if values.string("SECUREPUSH_WEBPUSH_VAPID_KEY_FILE") != nil {
            // An API-only process serves the public key too (`GET /v1/webpush/key`).
            vapidPublicKey = try Self.vapidKey(values).publicKey.x963Representation.base64URLEncodedString
        }
        if platforms.contains(.wns) { wns = try Self.wns(values, policy: endpointPolicies.wns) }
    }

    /// The real provider of `platform`, from the settings read for it, sending with `httpClient` and, for a
    /// platform whose token is a URL, `pinnedClients` (both owned by the caller). The one place besides `init`
    /// that names each platform: a platform's settings and its provider are added here together.
    func makeProvider(
        for platform: Platform, httpClient: HTTPClient?, pinnedClients: PinnedHTTPClients?, logger: Logger
    ) throws -> any PushProvider {
        func client() throws -> HTTPClient {
            guard let httpClient else {
                throw ConfigurationError("SECUREPUSH_PROVIDERS lists \(platform.rawValue), but no HTTP client was given")
            }
            return httpClient
        }
        func pinned() throws -> PinnedHTTPClients {
            guard let pinnedClients else {
                throw ConfigurationError("SECUREPUSH_PROVIDERS lists \(platform.rawValue), but no pinned HTTP clients were given")
            }
            return pinnedClients
        }
        let missing = ConfigurationError("SECUREPUSH_PROVIDERS lists \(platform.rawValue), but its settings were not read")
        switch platform {
        case .simulated:
            throw ConfigurationError("the simulated platform has no settings of its own (ProviderFactory makes it)")
        case .apns:
            guard let apns else { throw missing }
            return try APNsProvider(configuration: apns, httpClient: try client(), logger: logger)
        case .fcm:
            guard let fcm else { throw missing }
            return try FCMProvider(configuration: fcm, httpClient: try client(), logger: logger)
        case .webpush:
            guard let webPush else { throw missing }
            return try WebPushProvider(configuration: webPush, httpClient: try client(), pinnedClients: try pinned(), logger: logger)
        case .unifiedpush:
            guard var unifiedPush = webPush else { throw missing }
            unifiedPush.endpointPolicy = endpointPolicies.unifiedPush
            return try WebPushProvider(
                platform: .unifiedpush, configuration: unifiedPush, httpClient: try client(), pinnedClients: try pinned(), logger: logger)
        case .wns:
            guard let wns else { throw missing }
            return try WNSProvider(configuration: wns, httpClient: try client(), pinnedClients: try pinned(), logger: logger)
        }
    }

    static let timeoutRange: ClosedRange<Duration> = .seconds(1)...(.seconds(120))

    // MARK: APNs

    static func apns(_ values: ConfigurationValues, envelopes: EnvelopeSettings) throws -> APNsConfiguration {
        var apps: [APNsConfiguration.App] = []
        let multi = values.string("SECUREPUSH_APNS_APPS")
        if multi == nil || values.string("SECUREPUSH_APNS_KEY_FILE") != nil {
            let keyFile = try required(values, "SECUREPUSH_APNS_KEY_FILE", hint: "path to the AuthKey_<KEYID>.p8 file from Apple")
            let keyID = try required(values, "SECUREPUSH_APNS_KEY_ID", hint: "the 10-character key id of the .p8 key")
            let teamID = try required(values, "SECUREPUSH_APNS_TEAM_ID", hint: "the 10-character Apple team id")
            let topics = try required(values, "SECUREPUSH_APNS_TOPIC", hint: "the app's bundle id (several: comma-separated)")
            let key = try p8Key(path: keyFile, setting: "SECUREPUSH_APNS_KEY_FILE")
            for topic in list(topics) {
                apps.append(APNsConfiguration.App(topic: topic, teamID: teamID, keyID: keyID, key: key))
            }
        }
        if let multi {
            for entry in list(multi) {
                // bundle.id:TEAMID:KEYID:/path/to/AuthKey.p8 (the path is the rest, so it may contain ':').
                let parts = entry.split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
                guard parts.count == 4, parts.allSatisfy({ !$0.isEmpty }) else {
                    throw ConfigurationError(
                        "SECUREPUSH_APNS_APPS entries must look like bundle.id:TEAMID:KEYID:/path/to/AuthKey.p8, got \"\(entry)\"")
                }
                let key = try p8Key(path: parts[3], setting: "SECUREPUSH_APNS_APPS")
                apps.append(APNsConfiguration.App(topic: parts[0], teamID: parts[1], keyID: parts[2], key: key))
            }
        }
        let topics = apps.map(\.topic)
        guard Set(topics).count == topics.count else {
            throw ConfigurationError("SECUREPUSH_APNS_TOPIC/SECUREPUSH_APNS_APPS list a bundle id twice")
        }
        return APNsConfiguration(
            apps: apps,
            productionBaseURL: try baseURL(values, "SECUREPUSH_APNS_PRODUCTION_URL", default: APNsConfiguration.productionURL),
            sandboxBaseURL: try baseURL(values, "SECUREPUSH_APNS_SANDBOX_URL", default: APNsConfiguration.sandboxURL),
            caFile: try caFile(values, "SECUREPUSH_APNS_CA_FILE"),
            requestTimeout: try values.duration("SECUREPUSH_APNS_TIMEOUT", default: .seconds(10), in: timeoutRange),
            tokenLifetime: try values.duration(
                "SECUREPUSH_APNS_TOKEN_LIFETIME", default: .seconds(50 * 60), in: APNsConfiguration.tokenLifetimeRange),
            envelopes: envelopes
        )
    }

    static func p8Key(path: String, setting: String) throws -> P256.Signing.PrivateKey {
        let pem = try readFile(path, setting: setting)
        do {
            return try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw ConfigurationError("\(setting): \(path) is not a P-256 private key in PEM (.p8) form")
        }
    }

    // MARK: Web Push

    static func webPush(_ values: ConfigurationValues, policy: PushEndpointPolicy, envelopes: EnvelopeSettings) throws -> WebPushConfiguration {
        let key = try vapidKey(values)
        let subject = try required(values, "SECUREPUSH_WEBPUSH_SUBJECT", hint: "a contact such as mailto:ops@example.com")
        guard subject.hasPrefix("mailto:") || subject.hasPrefix("https://") else {
            throw ConfigurationError("SECUREPUSH_WEBPUSH_SUBJECT must be a mailto: or https: URI, got \"\(subject)\"")
        }
        return WebPushConfiguration(
            vapidKey: key,
            subject: subject,
            navigateURL: try navigateURL(values),
            caFile: try caFile(values, "SECUREPUSH_WEBPUSH_CA_FILE"),
            requestTimeout: try values.duration("SECUREPUSH_WEBPUSH_TIMEOUT", default: .seconds(10), in: timeoutRange),
            allowedHosts: policy.allowedHosts,
            allowedPrivateNetworks: policy.allowedPrivateNetworks,
            envelopes: envelopes
        )
    }

    /// The VAPID private key from `SECUREPUSH_WEBPUSH_VAPID_KEY_FILE` (PEM, or a base64url 32-byte scalar).
    static func vapidKey(_ values: ConfigurationValues) throws -> P256.Signing.PrivateKey {
        let path = try required(values, "SECUREPUSH_WEBPUSH_VAPID_KEY_FILE", hint: "path to the VAPID P-256 private key (PEM)")
        let text = try readFile(path, setting: "SECUREPUSH_WEBPUSH_VAPID_KEY_FILE").trimmingCharacters(in: .whitespacesAndNewlines)
        if let pemKey = try? P256.Signing.PrivateKey(pemRepresentation: text) {
            return pemKey
        } else if let raw = Data(base64URLEncoded: text), raw.count == 32, let rawKey = try? P256.Signing.PrivateKey(rawRepresentation: raw) {
            return rawKey
        }
        throw ConfigurationError("SECUREPUSH_WEBPUSH_VAPID_KEY_FILE: \(path) is neither a P-256 private key in PEM nor a base64url 32-byte key")
    }

    // MARK: Helpers

    static func required(_ values: ConfigurationValues, _ key: String, hint: String) throws -> String {
        guard let value = values.string(key) else {
            throw ConfigurationError("\(key) is not set (\(hint)); it is required because SECUREPUSH_PROVIDERS lists its platform")
        }
        return value
    }

    static func readFile(_ path: String, setting: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("\(setting): cannot read \(path)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError("\(setting): \(path) is not UTF-8 text")
        }
        return text
    }

    static func caFile(_ values: ConfigurationValues, _ key: String) throws -> String? {
        guard let path = values.string(key) else { return nil }
        guard FileManager.default.isReadableFile(atPath: path) else { throw ConfigurationError("\(key): cannot read \(path)") }
        return path
    }

    static func baseURL(_ values: ConfigurationValues, _ key: String, default defaultValue: String) throws -> String {
        guard let raw = values.string(key) else { return defaultValue }
        guard let url = URL(string: raw), url.scheme?.lowercased() == "https", url.host != nil else {
            throw ConfigurationError("\(key) must be an https URL, got \"\(raw)\"")
        }
        return raw.hasSuffix("/") ? String(raw.dropLast()) : raw
    }

    static func list(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
