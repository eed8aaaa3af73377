import Crypto
import Foundation

/// Everything the APNs provider needs: the apps it pushes for, where APNs is, and timing.
public struct APNsConfiguration: Sendable {
    /// One app (bundle id) and the token-auth key that signs for it.
    public struct App: Sendable {
        /// The bundle id, sent as `apns-topic`.
        public var topic: String
        /// The 10-character Apple team id (`iss` of the JWT).
        public var teamID: String
        /// The 10-character key id of the `.p8` key (`kid` of the JWT).
        public var keyID: String
        /// The P-256 signing key from the `.p8` file.
        public var key: P256.Signing.PrivateKey

        /// Creates an app entry from an already parsed key.
        public init(topic: String, teamID: String, keyID: String, key: P256.Signing.PrivateKey) {
            self.topic = topic
            self.teamID = teamID
            self.keyID = keyID
            self.key = key
        }

        /// Creates an app entry from the PEM text of a `.p8` key (PKCS#8).
        public init(topic: String, teamID: String, keyID: String, p8PEM: String) throws {
            self.init(topic: topic, teamID: teamID, keyID: keyID, key: try P256.Signing.PrivateKey(pemRepresentation: p8PEM))
        }
    }

    /// Apple's production endpoint.
    public static let productionURL = "https://api.push.apple.com"
    /// Apple's development (sandbox) endpoint.
    public static let sandboxURL = "https://api.sandbox.push.apple.com"

    /// The apps; the first one is the default for devices without a `topic` option.
    public var apps: [App]
    /// Base URL for devices with `environment` = `production` (the default).
    public var productionBaseURL: String
    /// Base URL for devices with `environment` = `sandbox`.
    public var sandboxBaseURL: String
    /// PEM file of CA certificates to trust instead of the system store (tests, pinning).
    public var caFile: String?
    /// Deadline of one request; APNs sometimes never answers a stream.
    public var requestTimeout: Duration
    /// How long one provider JWT is reused; APNs accepts 20–60 minutes.
    public var tokenLifetime: Duration
    /// Builds headers and the id-only body (docs/envelopes.md).
    public var envelope: APNsEnvelope

    /// The allowed range of `tokenLifetime`.
    public static let tokenLifetimeRange: ClosedRange<Duration> = .seconds(20 * 60)...(.seconds(60 * 60))

    /// Creates a configuration. The envelope's default topic becomes the first app's bundle id.
    public init(
        apps: [App],
        productionBaseURL: String = Self.productionURL,
        sandboxBaseURL: String = Self.sandboxURL,
        caFile: String? = nil,
        requestTimeout: Duration = .seconds(10),
        tokenLifetime: Duration = .seconds(50 * 60),
        envelopes: EnvelopeSettings = EnvelopeSettings()
    ) {
        self.apps = apps
        self.productionBaseURL = productionBaseURL
        self.sandboxBaseURL = sandboxBaseURL
        self.caFile = caFile
        self.requestTimeout = requestTimeout
        self.tokenLifetime = min(max(tokenLifetime, Self.tokenLifetimeRange.lowerBound), Self.tokenLifetimeRange.upperBound)
        self.envelope = APNsEnvelope(settings: envelopes, defaultTopic: apps.first?.topic)
    }
}
