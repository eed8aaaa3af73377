import Foundation
import NIOSSL
import PostgresNIO
import SecurePushCore

/// A parsed `DATABASE_URL` in libpq's URI dialect, so producers' psql and libpq use the same URL:
/// `postgres://user:password@host1:5432,host2:5432/db?target_session_attrs=read-write&sslmode=verify-full`.
///
/// Several hosts are tried in order (each new connection walks them and keeps the first whose role fits:
/// see `DatabaseConnector`). A `host` query parameter that starts with `/` names a unix socket directory.
/// Accepted parameters: `sslmode`, `sslrootcert`, `sslcert`, `sslkey`, `target_session_attrs`,
/// `connect_timeout`, `application_name`, `host`, `port`, `user`, `password`, `dbname`; any other is refused
/// with an error that names it.
public struct DatabaseURL: Sendable, Hashable, CustomStringConvertible {
    /// How TLS is negotiated (libpq's `sslmode`).
    public enum TLSMode: String, Sendable, Hashable {
        /// No TLS.
        case disable
        /// TLS when the server offers it (`allow` and `prefer`); the certificate is verified as with `verifyFull`.
        case prefer
        /// TLS required; the certificate is verified as with `verifyFull` (stricter than libpq, which only
        /// encrypts: SecurePush never talks to an unverified server over TLS).
        case require
        /// TLS required, the certificate chain verified against `sslrootcert` (or the system's roots).
        case verifyCA = "verify-ca"
        /// As `verifyCA`, and the certificate must name the host connected to.
        case verifyFull = "verify-full"
    }

    /// libpq's `target_session_attrs`: which server a connection may stay on.
    public enum TargetSessionAttributes: String, Sendable, Hashable, CaseIterable {
        case any, readWrite = "read-write", primary, readOnly = "read-only", standby, preferStandby = "prefer-standby"

        /// Whether SecurePush can run with it: every SecurePush process writes, so only the attributes that
        /// allow a writable primary are accepted (`any` is treated as `read-write`).
        public var allowsPrimary: Bool {
            switch self {
            case .any, .readWrite, .primary: true
            case .readOnly, .standby, .preferStandby: false
            }
        }
    }

    /// One host of the list, with its port.
    public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
        /// Host name or address.
        public var host: String
        /// TCP port.
        public var port: Int

        /// Creates an endpoint.
        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        /// `host:port` (IPv6 in brackets).
        public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }

    public var username: String
    public var password: String?
    public var database: String
    /// The hosts in the order they are tried (at least one).
    public var endpoints: [Endpoint]
    /// Unix socket directory, when connecting over a socket.
    public var socketDirectory: String?
    public var tls: TLSMode
    /// PEM file of the certificate authorities that verify the server (`sslrootcert`).
    public var sslRootCert: String?
    /// PEM files of a client certificate and its key (`sslcert`, `sslkey`).
    public var sslCert: String?
    public var sslKey: String?
    /// Which server a connection may stay on (`target_session_attrs`; SecurePush needs a writable primary).
    public var targetSessionAttributes: TargetSessionAttributes
    /// How long one host may take to accept a connection and finish the start-up (`connect_timeout`, seconds).
    public var connectTimeout: Duration
    /// `application_name`, shown in `pg_stat_activity`.
    public var applicationName: String?

    /// The parameters accepted in the query string.
    public static let acceptedParameters: Set<String> = [
        "sslmode", "sslrootcert", "sslcert", "sslkey", "target_session_attrs", "connect_timeout", "application_name",
        "host", "port", "user", "password", "dbname",
    ]

    /// The first host (the one a single-host URL names).
    public var host: String {
        get { endpoints[0].host }
        set { endpoints[0].host = newValue }
    }

    /// The first host's port.
    public var port: Int {
        get { endpoints[0].port }
        set { endpoints[0].port = newValue }
    }

    /// libpq's environment variables read as defaults for the TLS parameters a URL leaves out
    /// (`PGSSLMODE` for `sslmode`, ...): how deployment artifacts pass certificate files whose paths the URL
    /// cannot know (a systemd credential directory, a mounted secret).
    public static let environmentDefaults: [String: String] = [
        "PGSSLMODE": "sslmode", "PGSSLROOTCERT": "sslrootcert", "PGSSLCERT": "sslcert", "PGSSLKEY": "sslkey",
    ]

    /// Parses a URL; throws a `ConfigurationError` that names `DATABASE_URL` and never echoes the password.
    /// `environment` supplies `environmentDefaults` for parameters the URL does not set (the URL wins).
    public init(_ string: String, environment: [String: String] = [:]) throws {
        let parts = try Self.split(string)
        var query: [String: String] = [:]
        for (variable, parameter) in Self.environmentDefaults {
            if let value = environment[variable], !value.isEmpty { query[parameter] = value }
        }
        for item in parts.query.split(separator: "&", omittingEmptySubsequences: true) {
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = Self.decode(pair[0])
            guard Self.acceptedParameters.contains(name) else {
                throw ConfigurationError(
                    "DATABASE_URL has the parameter \(name.isEmpty ? "(empty)" : name), which SecurePush does not support (accepted: \(Self.acceptedParameters.sorted().joined(separator: ", ")))"
                )
            }
            query[name] = pair.count > 1 ? Self.decode(pair[1]) : ""
        }

        if let at = parts.authority.lastIndex(of: "@") {
            let userInfo = parts.authority[..<at]
            let colon = userInfo.firstIndex(of: ":")
            self.username = Self.decode(userInfo[..<(colon ?? userInfo.endIndex)])
            self.password = colon.map { Self.decode(userInfo[userInfo.index(after: $0)...]) }
        } else {
            self.username = ""
            self.password = nil
        }
        if username.isEmpty { username = query["user"] ?? "postgres" }
        if password == nil { password = query["password"] }
        self.database = Self.decode(parts.path.hasPrefix("/") ? parts.path.dropFirst() : parts.path)
        if database.isEmpty { database = query["dbname"] ?? username }

        let hostList = String(parts.authority.lastIndex(of: "@").map { parts.authority[parts.authority.index(after: $0)...] } ?? parts.authority)
        let defaultPorts = try (query["port"] ?? "").split(separator: ",").map { text -> Int in
            guard let port = Int(text), (1...65535).contains(port) else { throw ConfigurationError("DATABASE_URL has an invalid port") }
            return port
        }
        var endpoints = try Self.endpoints(hostList, defaultPorts: defaultPorts)
        if let socketHost = query["host"], socketHost.hasPrefix("/") {
            self.socketDirectory = socketHost
            if endpoints.isEmpty { endpoints = [Endpoint(host: "localhost", port: defaultPorts.first ?? 5432)] }
        } else {
            self.socketDirectory = nil
            if endpoints.isEmpty, let hosts = query["host"] {
                endpoints = try Self.endpoints(hosts, defaultPorts: defaultPorts)
            }
            guard !endpoints.isEmpty else { throw ConfigurationError("DATABASE_URL needs a host (or ?host=/socket/directory)") }
        }
        self.endpoints = endpoints

        switch query["sslmode"] ?? "prefer" {
        case "disable": self.tls = .disable
        case "allow", "prefer": self.tls = .prefer
        case "require": self.tls = .require
        case "verify-ca": self.tls = .verifyCA
        case "verify-full": self.tls = .verifyFull
        default: throw ConfigurationError("DATABASE_URL sslmode (or PGSSLMODE) must be disable, allow, prefer, require, verify-ca or verify-full")
        }
        self.sslRootCert = query["sslrootcert"]
        self.sslCert = query["sslcert"]
        self.sslKey = query["sslkey"]
        guard (sslCert == nil) == (sslKey == nil) else {
            throw ConfigurationError("DATABASE_URL needs both sslcert and sslkey (or PGSSLCERT and PGSSLKEY), or neither")
        }

        let attributes = query["target_session_attrs"] ?? "read-write"
        guard let target = TargetSessionAttributes(rawValue: attributes) else {
            throw ConfigurationError(
                "DATABASE_URL target_session_attrs must be one of \(TargetSessionAttributes.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard target.allowsPrimary else {
            throw ConfigurationError(
                "DATABASE_URL target_session_attrs=\(attributes) would keep SecurePush on a standby, but every SecurePush process writes: use read-write (the default), primary or any"
            )
        }
        self.targetSessionAttributes = target
        if let timeout = query["connect_timeout"], !timeout.isEmpty {
            guard let seconds = Int(timeout), seconds >= 0, seconds <= 3600 else {
                throw ConfigurationError("DATABASE_URL connect_timeout must be a whole number of seconds (0 to 3600)")
            }
            // As libpq: 0 means wait indefinitely, and values under 2 count as 2.
            self.connectTimeout = seconds == 0 ? .seconds(3600) : .seconds(max(2, seconds))
        } else {
            self.connectTimeout = .seconds(5)
        }
        self.applicationName = query["application_name"]
    }

    /// The URL without its password (`postgres://user:***@host:port,host:port/db`): what may be printed.
    public var description: String {
        "postgres://\(username)\(password == nil ? "" : ":***")@\(endpoints.map(\.description).joined(separator: ","))/\(database)"
    }

    /// The unix socket path PostgreSQL listens on for this port.
    public var socketPath: String? {
        socketDirectory.map { "\($0)/.s.PGSQL.\(port)" }
    }

    /// A pooled-client configuration for one endpoint (the first by default).
    public func clientConfiguration(endpoint: Endpoint? = nil) -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        if let socketPath {
            configuration = .init(unixSocketPath: socketPath, username: username, password: password, database: database)
        } else {
            let endpoint = endpoint ?? endpoints[0]
            configuration = .init(
                host: endpoint.host, port: endpoint.port, username: username, password: password, database: database,
                tls: (try? clientTLS()) ?? fallbackTLS)
            if tls != .verifyCA { configuration.options.tlsServerName = endpoint.host }
        }
        configuration.options.connectTimeout = connectTimeout
        if let applicationName { configuration.options.additionalStartupParameters.append(("application_name", applicationName)) }
        return configuration
    }

    /// A single-connection configuration for the first endpoint (the tests' direct connections).
    public func connectionConfiguration() throws -> PostgresConnection.Configuration {
        if let socketPath {
            return .init(unixSocketPath: socketPath, username: username, password: password, database: database)
        }
        return .init(host: host, port: port, username: username, password: password, database: database, tls: try connectionTLS())
    }

    /// The TLS configuration of `sslmode`, `sslrootcert`, `sslcert` and `sslkey` (`nil` for `disable`).
    public func tlsConfiguration() throws -> TLSConfiguration? {
        guard tls != .disable else { return nil }
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = tls == .verifyCA ? .noHostnameVerification : .fullVerification
        do {
            if let sslRootCert { configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(sslRootCert)) }
            if let sslCert, let sslKey {
                configuration.certificateChain = try NIOSSLCertificate.fromPEMFile(sslCert).map { .certificate($0) }
                configuration.privateKey = .privateKey(try NIOSSLPrivateKey(file: sslKey, format: .pem))
            }
        } catch {
            throw ConfigurationError("DATABASE_URL: cannot read the TLS files (sslrootcert, sslcert, sslkey): \(error)")
        }
        return configuration
    }

    /// What a pooled client uses should the TLS files become unreadable after start-up (where they were checked):
    /// TLS verified against the system's roots, never plaintext, unless `sslmode` is `disable`.
    var fallbackTLS: PostgresClient.Configuration.TLS {
        tls == .disable ? .disable : .require(.makeClientConfiguration())
    }

    /// The TLS of a pooled client.
    func clientTLS() throws -> PostgresClient.Configuration.TLS {
        guard let configuration = try tlsConfiguration() else { return .disable }
        return tls == .prefer ? .prefer(configuration) : .require(configuration)
    }

    /// The TLS of a single connection.
    public func connectionTLS() throws -> PostgresConnection.Configuration.TLS {
        guard let configuration = try tlsConfiguration() else { return .disable }
        let context = try NIOSSLContext(configuration: configuration)
        return tls == .prefer ? .prefer(context) : .require(context)
    }

    // MARK: Parsing

    private struct Parts {
        var authority: Substring
        var path: Substring
        var query: Substring
    }

    /// Splits `scheme://authority/path?query` (the authority may list several hosts, which URLComponents refuses).
    private static func split(_ string: String) throws -> Parts {
        let malformed = ConfigurationError("DATABASE_URL must look like postgres://user:password@host:port/database")
        guard let schemeEnd = string.range(of: "://") else { throw malformed }
        let scheme = string[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "postgres" || scheme == "postgresql" else { throw malformed }
        var rest = string[schemeEnd.upperBound...]
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        // The path starts at the first "/" after the user information (a password may hold "/" only encoded).
        let afterUser = rest.lastIndex(of: "@").map { rest.index(after: $0) } ?? rest.startIndex
        let slash = rest[afterUser...].firstIndex(of: "/") ?? rest.endIndex
        return Parts(authority: rest[..<slash], path: rest[slash...], query: query)
    }

    /// `h1:5432,h2,[::1]:5433` with `defaultPorts` for hosts without their own (libpq's `port=` list).
    private static func endpoints(_ list: String, defaultPorts: [Int]) throws -> [Endpoint] {
        guard !list.isEmpty else { return [] }
        return try list.split(separator: ",", omittingEmptySubsequences: false).enumerated().map { index, entry in
            var host = Substring(entry)
            var port: Int?
            if host.hasPrefix("[") {
                guard let close = host.firstIndex(of: "]") else { throw ConfigurationError("DATABASE_URL has a malformed IPv6 host") }
                let after = host[host.index(after: close)...]
                host = host[host.index(after: host.startIndex)..<close]
                if after.hasPrefix(":") { port = Int(after.dropFirst()) ?? -1 }
            } else if let colon = host.lastIndex(of: ":") {
                port = Int(host[host.index(after: colon)...]) ?? -1
                host = host[..<colon]
            }
            guard !host.isEmpty else { throw ConfigurationError("DATABASE_URL has an empty host in its host list") }
            let resolved = port ?? (defaultPorts.count > 1 ? defaultPorts[safe: index] : defaultPorts.first) ?? 5432
            guard (1...65535).contains(resolved) else { throw ConfigurationError("DATABASE_URL has an invalid port") }
            return Endpoint(host: decode(host), port: resolved)
        }
    }

    private static func decode(_ text: Substring) -> String {
        String(text).removingPercentEncoding ?? String(text)
    }
}

extension Array {
    fileprivate subscript(safe index: Int) -> Element? {
        indices.contains(index) ? self[index] : nil
    }
}
