import Foundation
import NIOSSL
import PostgresNIO

/// A parsed `DATABASE_URL`: `postgres://user:password@host:port/db?sslmode=...&host=/socket/dir`.
///
/// As with libpq, a `host` query parameter that starts with `/` names a unix socket directory.
public struct DatabaseURL: Sendable, Hashable, CustomStringConvertible {
    /// How TLS is negotiated.
    public enum TLSMode: String, Sendable, Hashable {
        case disable, prefer, require
    }

    public var username: String
    public var password: String?
    public var database: String
    public var host: String
    public var port: Int
    /// Unix socket directory, when connecting over a socket.
    public var socketDirectory: String?
    public var tls: TLSMode

    /// Parses a URL; throws a `ConfigurationError` that names `DATABASE_URL` and never echoes the password.
    public init(_ string: String) throws {
        guard let components = URLComponents(string: string),
            let scheme = components.scheme, scheme == "postgres" || scheme == "postgresql"
        else {
            throw ConfigurationError("DATABASE_URL must look like postgres://user:password@host:port/database")
        }
        let queryItems = components.queryItems ?? []
        func query(_ name: String) -> String? { queryItems.first { $0.name == name }?.value }

        self.username = components.percentEncodedUser?.removingPercentEncoding ?? query("user") ?? "postgres"
        self.password = components.percentEncodedPassword?.removingPercentEncoding ?? query("password")
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        self.database = path.isEmpty ? username : path
        self.port = components.port ?? Int(query("port") ?? "") ?? 5432
        guard (1...65535).contains(port) else { throw ConfigurationError("DATABASE_URL has an invalid port") }
        if let socketHost = query("host"), socketHost.hasPrefix("/") {
            self.socketDirectory = socketHost
            self.host = components.host ?? "localhost"
        } else {
            self.socketDirectory = nil
            guard let host = components.host, !host.isEmpty else {
                throw ConfigurationError("DATABASE_URL needs a host (or ?host=/socket/directory)")
            }
            self.host = host
        }
        switch query("sslmode") ?? "prefer" {
        case "disable": self.tls = .disable
        case "allow", "prefer": self.tls = .prefer
        case "require", "verify-ca", "verify-full": self.tls = .require
        default: throw ConfigurationError("DATABASE_URL sslmode must be disable, prefer or require")
        }
    }

    /// The URL without its password (`postgres://user:***@host:port/db`): what may be printed.
    public var description: String {
        "postgres://\(username)\(password == nil ? "" : ":***")@\(host):\(port)/\(database)"
    }

    /// The unix socket path PostgreSQL listens on for this port.
    public var socketPath: String? {
        socketDirectory.map { "\($0)/.s.PGSQL.\(port)" }
    }

    /// A pooled-client configuration.
    public func clientConfiguration() -> PostgresClient.Configuration {
        if let socketPath {
            return .init(unixSocketPath: socketPath, username: username, password: password, database: database)
        }
        return .init(host: host, port: port, username: username, password: password, database: database, tls: clientTLS)
    }

    /// A single-connection configuration (for the dedicated LISTEN connection).
    public func connectionConfiguration() throws -> PostgresConnection.Configuration {
        if let socketPath {
            return .init(unixSocketPath: socketPath, username: username, password: password, database: database)
        }
        return .init(host: host, port: port, username: username, password: password, database: database, tls: try connectionTLS())
    }

    private var clientTLS: PostgresClient.Configuration.TLS {
        switch tls {
        case .disable: .disable
        case .prefer: .prefer(.makeClientConfiguration())
        case .require: .require(.makeClientConfiguration())
        }
    }

    private func connectionTLS() throws -> PostgresConnection.Configuration.TLS {
        switch tls {
        case .disable: .disable
        case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
        case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
    }
}
