import SecurePushCore

/// What a relay request must stay within before it costs the database anything (issue 48, item 2).
public struct RelayLimits: Sendable {
    /// Failed authentications per client address (`SECUREPUSH_RELAY_AUTH_FAILURE_BURST`, 20, then
    /// `SECUREPUSH_RELAY_AUTH_FAILURE_RATE_PER_MINUTE`, 30): past them, the address's requests answer `429`
    /// before the installation is looked up. A server whose requests are signed right never fails one.
    public var authFailures = RateLimit(perSecond: 0.5, burst: 20)
    /// Requests per installation and relay process (`SECUREPUSH_RELAY_INSTALLATION_RATE`, burst as many): past
    /// it, `429` with `Retry-After`, counted only once the request's signature checked.
    public var installationRequests = RateLimit(perSecond: 2000, burst: 2000)
    /// The peers whose `X-Forwarded-For` is believed (`SECUREPUSH_TRUSTED_PROXIES`): a TLS proxy in front.
    public var trustedProxies = TrustedProxies.none
    /// How long a request body may take to arrive (`SECUREPUSH_HTTP_READ_TIMEOUT`): then `408`.
    public var bodyReadTimeout: Duration = .seconds(10)
    /// How long an installation id no installation has is remembered as unknown (no database lookup meanwhile).
    public var unknownFor: Duration = .seconds(10)

    /// The defaults.
    public init() {}
}
