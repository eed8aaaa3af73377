import Foundation
import SecurePushAPI
import SecurePushCore
import SecurePushStore

/// The HTTP API's settings.
public struct HTTPConfiguration: Sendable {
    /// Bind address (`SECUREPUSH_HOST`).
    public var host: String
    /// Port (`SECUREPUSH_PORT`).
    public var port: Int
    /// The operations listener's address (`SECUREPUSH_OPS_HOST`, default 127.0.0.1) and port
    /// (`SECUREPUSH_OPS_PORT`): when set, `/healthz`, `/readyz`, `/status`, `/status.html` and `/metrics` are
    /// served there alone, and the API port answers 404 for them. Unset: the API port serves them.
    public var operations: (host: String, port: Int)?
    /// The operations token (`SECUREPUSH_OPS_TOKEN`): with it, the operations listener serves the support lookup
    /// (`/support/notifications/{id}`, `/support/devices/{id}`) to requests that carry it; without it, no lookup.
    public var opsToken: String?
    /// How user JWTs are verified (`SECUREPUSH_USER_JWT_SECRET` or `SECUREPUSH_USER_JWT_PUBLIC_KEY`).
    public var userTokenKey: UserTokenVerifier.Key?
    /// Required `iss` (`SECUREPUSH_USER_JWT_ISSUER`).
    public var userTokenIssuer: String?
    /// Required `aud` (`SECUREPUSH_USER_JWT_AUDIENCE`).
    public var userTokenAudience: String?
    /// The longest lifetime (`exp - iat`) a user token may have (`SECUREPUSH_USER_JWT_MAX_LIFETIME`; unset: no bound).
    public var userTokenMaxLifetime: Duration?
    /// Purge a payload this long after it was first read (`SECUREPUSH_PURGE_AFTER_READ`; off by default).
    public var purgeAfterRead: Duration?
    /// How often the API refreshes the fetch-lifecycle gauges of `/metrics` from the database
    /// (`SECUREPUSH_FETCH_STATS_INTERVAL`).
    public var fetchStatsInterval: Duration

    /// The longest one database call of an API request may take before it answers 503 `unavailable`
    /// (`SECUREPUSH_API_DB_TIMEOUT`, default 10 s).
    public var databaseTimeout: Duration

    /// Whether `/demo/` serves the Web kit's demo page (`SECUREPUSH_DEMO=on`; off by default).
    public var demo: Bool

    /// Origins whose Web apps may call the `/v1/` routes from a browser (`SECUREPUSH_CORS_ORIGINS`: exact
    /// origins such as `https://app.example.com`, comma-separated; none by default).
    public var corsOrigins: Set<String>

    /// Abuse and HTTP limits (`SECUREPUSH_AUTH_*`, `SECUREPUSH_*_READ_*`, `SECUREPUSH_TRUSTED_PROXIES`, HTTP limits).
    public var limits: APILimits

    /// The operations routes' own listener (`SECUREPUSH_OPS_PORT`), if any.
    var operationsListener: ListenerCheck.Listener? {
        operations.map { ListenerCheck.Listener(host: $0.host, port: $0.port, settings: "SECUREPUSH_OPS_HOST, SECUREPUSH_OPS_PORT") }
    }

    /// What a process of the API role (`servesAPI`) or a dispatcher-only one listens on: the API's port (which
    /// also serves the operations routes when they have no listener of their own) and the operations port.
    func listeners(servesAPI: Bool) -> [ListenerCheck.Listener] {
        let api = ListenerCheck.Listener(host: host, port: port, settings: "SECUREPUSH_HOST, SECUREPUSH_PORT")
        guard let operations = operationsListener else { return [api] }
        return (servesAPI ? [api] : []) + [operations]
    }

    init(values: ConfigurationValues, host: String? = nil, port: Int? = nil) throws {
        self.limits = try Self.limits(values)
        self.demo = try values.choice("SECUREPUSH_DEMO", default: "off", allowed: ["on", "off"]) == "on"
        self.corsOrigins = try Self.origins(values.string("SECUREPUSH_CORS_ORIGINS") ?? "")
        self.databaseTimeout = try values.duration("SECUREPUSH_API_DB_TIMEOUT", default: .seconds(10), in: .milliseconds(100)...(.seconds(120)))
        self.host = host ?? values.string("SECUREPUSH_HOST") ?? "127.0.0.1"
        self.port = try values.int("SECUREPUSH_PORT", flag: port, default: 8080, in: 0...65535)
        if values.string("SECUREPUSH_OPS_PORT") != nil {
            let opsPort = try values.int("SECUREPUSH_OPS_PORT", default: 9090, in: 0...65535)
            self.operations = (values.string("SECUREPUSH_OPS_HOST") ?? "127.0.0.1", opsPort)
        } else if values.string("SECUREPUSH_OPS_HOST") != nil {
            throw ConfigurationError("SECUREPUSH_OPS_HOST is set without SECUREPUSH_OPS_PORT; set both to serve the operations routes apart")
        }
        if let token = values.string("SECUREPUSH_OPS_TOKEN") {
            guard operations != nil else {
                throw ConfigurationError(
                    "SECUREPUSH_OPS_TOKEN is set without SECUREPUSH_OPS_PORT: the support lookup is served on the operations listener only")
            }
            guard token.utf8.count >= 24, token.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                throw ConfigurationError("SECUREPUSH_OPS_TOKEN must be at least 24 printable characters (openssl rand -hex 32)")
            }
            self.opsToken = token
        }
        let secret = values.string("SECUREPUSH_USER_JWT_SECRET")
        let publicKey = values.string("SECUREPUSH_USER_JWT_PUBLIC_KEY")
        switch (secret, publicKey) {
        case (.some, .some):
            throw ConfigurationError("set either SECUREPUSH_USER_JWT_SECRET (HS256) or SECUREPUSH_USER_JWT_PUBLIC_KEY (ES256/RS256), not both")
        case (.some(let secret), nil):
            guard secret.utf8.count >= 32 else {
                throw ConfigurationError(
                    "SECUREPUSH_USER_JWT_SECRET must be at least 32 bytes (HS256 keys shorter than the hash are refused; use 32 random bytes)")
            }
            self.userTokenKey = .hs256(secret: secret)
        case (nil, .some(let key)):
            if key.contains("-----BEGIN") {
                self.userTokenKey = .publicKey(pem: key)
            } else {
                guard let pem = try? String(contentsOfFile: key, encoding: .utf8) else {
                    throw ConfigurationError("SECUREPUSH_USER_JWT_PUBLIC_KEY: cannot read the PEM file \(key)")
                }
                self.userTokenKey = .publicKey(pem: pem)
            }
        case (nil, nil):
            self.userTokenKey = nil
        }
        self.fetchStatsInterval = try values.duration(
            "SECUREPUSH_FETCH_STATS_INTERVAL", default: .seconds(30), in: .milliseconds(100)...(.seconds(3600)))
        self.userTokenIssuer = values.string("SECUREPUSH_USER_JWT_ISSUER")
        self.userTokenAudience = values.string("SECUREPUSH_USER_JWT_AUDIENCE")
        if values.string("SECUREPUSH_USER_JWT_MAX_LIFETIME") != nil {
            self.userTokenMaxLifetime = try values.duration(
                "SECUREPUSH_USER_JWT_MAX_LIFETIME", default: .seconds(3600), in: .seconds(1)...(.seconds(366 * 86_400)))
        }
        if values.string("SECUREPUSH_PURGE_AFTER_READ").map({ ["off", "never", "0"].contains($0.lowercased()) }) ?? true {
            self.purgeAfterRead = nil
        } else {
            self.purgeAfterRead = try values.duration("SECUREPUSH_PURGE_AFTER_READ", default: .zero, in: .seconds(0)...(.seconds(3650 * 86_400)))
        }
    }

    static func limits(_ values: ConfigurationValues) throws -> APILimits {
        var limits = APILimits()
        var throttle = limits.authThrottle
        throttle.freeFailures = try values.int("SECUREPUSH_AUTH_FREE_FAILURES", default: throttle.freeFailures, in: 0...1000)
        throttle.baseBlock = try values.duration("SECUREPUSH_AUTH_BLOCK", default: throttle.baseBlock, in: .milliseconds(100)...(.seconds(3600)))
        throttle.maxBlock = try values.duration("SECUREPUSH_AUTH_BLOCK_MAX", default: throttle.maxBlock, in: .seconds(1)...(.seconds(86_400)))
        throttle.window = try values.duration(
            "SECUREPUSH_AUTH_FAILURE_WINDOW", default: throttle.window, in: .seconds(1)...(.seconds(7 * 86_400)))
        guard throttle.maxBlock >= throttle.baseBlock else {
            throw ConfigurationError("SECUREPUSH_AUTH_BLOCK_MAX must not be shorter than SECUREPUSH_AUTH_BLOCK")
        }
        limits.authThrottle = throttle
        limits.trustedProxies = TrustedProxies(try values.networks("SECUREPUSH_TRUSTED_PROXIES"))
        limits.deviceReads = RateLimit(
            perSecond: Double(try values.int("SECUREPUSH_DEVICE_READ_RATE", default: 10, in: 1...100_000)),
            burst: try values.int("SECUREPUSH_DEVICE_READ_BURST", default: 300, in: 1...1_000_000))
        limits.userReads = RateLimit(
            perSecond: Double(try values.int("SECUREPUSH_USER_READ_RATE", default: 30, in: 1...100_000)),
            burst: try values.int("SECUREPUSH_USER_READ_BURST", default: 1000, in: 1...1_000_000))
        limits.maxRequestBodyBytes = try values.int("SECUREPUSH_MAX_BODY_BYTES", default: limits.maxRequestBodyBytes, in: 1024...1_048_576)
        limits.maxHeaderBytes = try values.int("SECUREPUSH_MAX_HEADER_BYTES", default: limits.maxHeaderBytes, in: 1024...1_048_576)
        limits.bodyReadTimeout = try values.duration(
            "SECUREPUSH_HTTP_READ_TIMEOUT", default: limits.bodyReadTimeout, in: .milliseconds(100)...(.seconds(600)))
        limits.idleTimeout = try values.duration(
            "SECUREPUSH_HTTP_IDLE_TIMEOUT", default: limits.idleTimeout, in: .seconds(1)...(.seconds(3600)))
        limits.maxConnections = try values.int("SECUREPUSH_MAX_CONNECTIONS", default: limits.maxConnections, in: 1...1_000_000)
        limits.maxConnectionsPerAddress = try values.int(
            "SECUREPUSH_MAX_CONNECTIONS_PER_ADDRESS", default: limits.maxConnectionsPerAddress, in: 1...1_000_000)
        limits.headerTimeout = try values.duration(
            "SECUREPUSH_HTTP_HEADER_TIMEOUT", default: limits.headerTimeout, in: .milliseconds(100)...(.seconds(600)))
        return limits
    }

    /// The verifier, or a configuration error naming the settings when none is configured.
    public func makeUserTokenVerifier() async throws -> UserTokenVerifier {
        guard let userTokenKey else {
            throw ConfigurationError(
                "the API needs SECUREPUSH_USER_JWT_SECRET (HS256) or SECUREPUSH_USER_JWT_PUBLIC_KEY (ES256/RS256 PEM) to verify user tokens")
        }
        do {
            return try await UserTokenVerifier(
                key: userTokenKey, issuer: userTokenIssuer, audience: userTokenAudience, maxLifetime: userTokenMaxLifetime)
        } catch {
            throw ConfigurationError("SECUREPUSH_USER_JWT_PUBLIC_KEY is not a usable EC P-256 or RSA public key in PEM form")
        }
    }

    /// Parses `SECUREPUSH_CORS_ORIGINS`: each entry `http(s)://host[:port]` exactly as a browser sends its
    /// `Origin` (no path, no trailing slash, lowercase scheme and host); `*` is refused (credentials would
    /// then be readable by any site).
    static func origins(_ text: String) throws -> Set<String> {
        var origins: Set<String> = []
        for entry in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
            guard let url = URL(string: entry), let scheme = url.scheme, ["http", "https"].contains(scheme), let host = url.host, !host.isEmpty,
                url.path.isEmpty, url.query == nil, url.fragment == nil, url.user == nil, entry == entry.lowercased()
            else {
                throw ConfigurationError(
                    "SECUREPUSH_CORS_ORIGINS: \"\(entry)\" is not an origin such as https://app.example.com (scheme, host and port only, lowercase)")
            }
            origins.insert(entry)
        }
        return origins
    }
}
