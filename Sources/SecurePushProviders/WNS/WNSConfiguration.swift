import Foundation
import SecurePushCore

/// Settings of the WNS provider.
public struct WNSConfiguration: Sendable {
    /// The classic (UWP) token endpoint.
    public static let defaultTokenURL = "https://login.live.com/accesstoken.srf"
    /// The scope for the classic token endpoint (`https://wns.windows.com/.default` for Windows App SDK / Entra ID).
    public static let defaultScope = "notify.windows.com"
    /// The device option that chooses the app.
    public static let appOption = "app"

    /// One app identity (one package): the credentials WNS issues access tokens for. A channel URI can only
    /// be pushed to with a token of the app that created it.
    public struct App: Sendable {
        /// The name devices give in their `app` option (for example the package family name); `nil` for the
        /// app configured with `SECUREPUSH_WNS_CLIENT_ID`, which serves devices without the option.
        public var name: String?
        /// The app's client id (package SID or Entra application id).
        public var clientID: String
        /// The client secret. Never logged.
        public var clientSecret: String
        /// The OAuth token endpoint.
        public var tokenURL: String
        /// The OAuth scope requested.
        public var scope: String

        /// Creates an app entry.
        public init(
            name: String? = nil, clientID: String, clientSecret: String, tokenURL: String = WNSConfiguration.defaultTokenURL,
            scope: String = WNSConfiguration.defaultScope
        ) {
            self.name = name
            self.clientID = clientID
            self.clientSecret = clientSecret
            self.tokenURL = tokenURL
            self.scope = scope
        }
    }

    /// The apps; a device's `app` option chooses one by name, and the first serves devices without it.
    public var apps: [App]
    /// Which channel URIs may be pushed to (`SECUREPUSH_WNS_ALLOWED_HOSTS`,
    /// `SECUREPUSH_PUSH_ALLOWED_PRIVATE_NETWORKS`). Channel URIs are attacker-supplied, so the hosts stay
    /// Microsoft's outside tests.
    public var endpointPolicy: PushEndpointPolicy
    /// Hosts channel URIs may point at: the host itself or a subdomain of one of these.
    public var allowedHostSuffixes: [String] { endpointPolicy.allowedHosts }
    /// PEM CA certificates to trust instead of the system store (tests).
    public var caFile: String?
    /// Deadline of one request.
    public var requestTimeout: Duration
    /// Back-off when WNS answers 406 (throttled) without a `Retry-After`.
    public var throttleBackoff: Duration
    /// Builds the raw, id-only notification (docs/envelopes.md).
    public var envelope = WNSEnvelope()

    /// Creates a configuration for one or more apps; `allowedPrivateNetworks` are the non-public blocks
    /// channel URIs may still reach.
    public init(
        apps: [App],
        allowedHostSuffixes: [String] = PushEndpointPolicies.defaultWNSHosts,
        allowedPrivateNetworks: [IPNetwork] = [],
        caFile: String? = nil,
        requestTimeout: Duration = .seconds(10),
        throttleBackoff: Duration = .seconds(60)
    ) {
        self.apps = apps
        self.endpointPolicy = PushEndpointPolicy(
            allowedHosts: allowedHostSuffixes, allowedPrivateNetworks: allowedPrivateNetworks, allowedHostsSetting: "SECUREPUSH_WNS_ALLOWED_HOSTS")
        self.caFile = caFile
        self.requestTimeout = requestTimeout
        self.throttleBackoff = throttleBackoff
    }

    /// Creates a configuration for one app.
    public init(
        clientID: String,
        clientSecret: String,
        tokenURL: String = Self.defaultTokenURL,
        scope: String = Self.defaultScope,
        allowedHostSuffixes: [String] = PushEndpointPolicies.defaultWNSHosts,
        allowedPrivateNetworks: [IPNetwork] = [],
        caFile: String? = nil,
        requestTimeout: Duration = .seconds(10),
        throttleBackoff: Duration = .seconds(60)
    ) {
        self.init(
            apps: [App(clientID: clientID, clientSecret: clientSecret, tokenURL: tokenURL, scope: scope)],
            allowedHostSuffixes: allowedHostSuffixes, allowedPrivateNetworks: allowedPrivateNetworks, caFile: caFile,
            requestTimeout: requestTimeout, throttleBackoff: throttleBackoff)
    }
}
