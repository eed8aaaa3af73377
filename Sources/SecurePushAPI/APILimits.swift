import SecurePushCore
import SecurePushStore

/// The API's abuse limits and HTTP limits (see docs/configuration.md).
public struct APILimits: Sendable {
    /// Throttling of failed device-credential and user-token attempts, per client address and device.
    public var authThrottle = AuthThrottlePolicy()
    /// Peers whose `X-Forwarded-For` is believed (`SECUREPUSH_TRUSTED_PROXIES`, addresses and CIDR blocks).
    public var trustedProxies = TrustedProxies.none
    /// Reads per second one device may sustain (`SECUREPUSH_DEVICE_READ_RATE`) and its burst (`SECUREPUSH_DEVICE_READ_BURST`).
    public var deviceReads = RateLimit(perSecond: 10, burst: 300)
    /// The same for all of one user's devices together (`SECUREPUSH_USER_READ_RATE`, `SECUREPUSH_USER_READ_BURST`).
    public var userReads = RateLimit(perSecond: 30, burst: 1000)
    /// Largest request body (`SECUREPUSH_MAX_BODY_BYTES`).
    public var maxRequestBodyBytes = 16 * 1024
    /// How long a request body may take to arrive (`SECUREPUSH_HTTP_READ_TIMEOUT`).
    public var bodyReadTimeout: Duration = .seconds(10)
    /// A connection with nothing to read or write for this long is closed (`SECUREPUSH_HTTP_IDLE_TIMEOUT`).
    public var idleTimeout: Duration = .seconds(60)
    /// Connections accepted at once (`SECUREPUSH_MAX_CONNECTIONS`); more wait in the backlog. The process
    /// raises its open-file limit to fit at start-up.
    public var maxConnections = 16_384
    /// Connections one client address may hold open at once (`SECUREPUSH_MAX_CONNECTIONS_PER_ADDRESS`); more
    /// are closed at once. Trusted proxies are not limited. Far above what a carrier NAT address needs,
    /// far below `maxConnections`, so one address cannot take every slot.
    public var maxConnectionsPerAddress = 1000
    /// How long a connection may take to send a request head, from its opening or from its previous
    /// response (`SECUREPUSH_HTTP_HEADER_TIMEOUT`): idle or trickling connections are closed after it.
    public var headerTimeout: Duration = .seconds(10)
    /// Largest request header section (`SECUREPUSH_MAX_HEADER_BYTES`).
    public var maxHeaderBytes = 16 * 1024

    /// The defaults.
    public init() {}
}
