import Crypto
import Foundation
import SecurePushCore

/// Settings of the Web Push provider.
public struct WebPushConfiguration: Sendable {
    /// The VAPID (application server) key pair's private half.
    public var vapidKey: P256.Signing.PrivateKey
    /// The contact put in the VAPID `sub` claim: `mailto:` or `https:` URI.
    public var subject: String
    /// PEM CA certificates to trust instead of the system store (tests).
    public var caFile: String?
    /// Deadline of one request.
    public var requestTimeout: Duration
    /// Validity of a VAPID JWT (`exp` - now); RFC 8292 allows at most 24 hours.
    public var vapidLifetime: Duration
    /// Which endpoints may be pushed to (`SECUREPUSH_WEBPUSH_ALLOWED_HOSTS`,
    /// `SECUREPUSH_PUSH_ALLOWED_PRIVATE_NETWORKS`). Endpoints are attacker-supplied.
    public var endpointPolicy: PushEndpointPolicy
    /// Builds the declarative, id-only message (docs/envelopes.md).
    public var envelope: WebPushEnvelope

    /// Creates a configuration; `vapidLifetime` is clamped to 1 minute...24 hours. `allowedHosts` are
    /// host suffixes (default: the public push services), `allowedPrivateNetworks` the non-public blocks
    /// endpoints may still reach (a self-hosted push server). `navigateURL` is the page a tap on the
    /// declarative notification opens (`{id}` is replaced by the notification id).
    public init(
        vapidKey: P256.Signing.PrivateKey, subject: String, navigateURL: String, caFile: String? = nil, requestTimeout: Duration = .seconds(10),
        vapidLifetime: Duration = .seconds(12 * 3600), allowedHosts: [String] = PushEndpointPolicies.defaultWebPushHosts,
        allowedPrivateNetworks: [IPNetwork] = [], envelopes: EnvelopeSettings = EnvelopeSettings()
    ) {
        self.endpointPolicy = PushEndpointPolicy(
            allowedHosts: allowedHosts, allowedPrivateNetworks: allowedPrivateNetworks, allowedHostsSetting: "SECUREPUSH_WEBPUSH_ALLOWED_HOSTS")
        self.vapidKey = vapidKey
        self.subject = subject
        self.caFile = caFile
        self.requestTimeout = requestTimeout
        self.vapidLifetime = min(max(vapidLifetime, .seconds(60)), .seconds(24 * 3600))
        self.envelope = WebPushEnvelope(settings: envelopes, navigateURL: navigateURL)
    }

    /// The VAPID public key as base64url of the uncompressed point (the `k` parameter and the
    /// `applicationServerKey` browsers subscribe with).
    public var publicKeyBase64URL: String { vapidKey.publicKey.x963Representation.base64URLEncodedString }
}
