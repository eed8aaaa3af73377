import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import SecurePushCore

#if canImport(Glibc)
    import Glibc
#endif

/// What a server is, as a connection to it sees it.
public enum ServerRole: String, Sendable {
    /// Accepts writes.
    case primary
    /// In recovery: a streaming standby (a demoted primary comes back as one).
    case standby
    /// Not in recovery, but `default_transaction_read_only` is on.
    case readOnly = "read-only"
}

/// How quickly a silent peer is declared dead on a database socket: TCP keepalive probes after `idle` of
/// silence, every `interval`, `count` of them; and `userTimeout` (Linux `TCP_USER_TIMEOUT`) for data sent
/// but not acknowledged (a frozen or unreachable primary).
public struct DeadPeerDetection: Sendable, Hashable {
    public var idle: Duration = .seconds(5)
    public var interval: Duration = .seconds(2)
    public var count: Int = 3
    public var userTimeout: Duration = .seconds(10)

    /// The defaults: a silent peer is found dead within about 10 s.
    public init() {}
}

/// No host of `DATABASE_URL` is a writable primary now: each host's outcome, for the log and the error.
public struct NoWritablePrimary: Error, CustomStringConvertible, Sendable {
    /// `host:port standby`, `host:port unreachable (...)`, ...
    public var outcomes: [String]

    public var description: String {
        "no writable primary among the hosts of DATABASE_URL: \(outcomes.joined(separator: "; "))"
    }

    /// Whether every host answered, as a standby or read-only (the database is there, but not writable).
    public var onlyStandbys: Bool { !outcomes.isEmpty && outcomes.allSatisfy { $0.hasSuffix(" standby") || $0.hasSuffix(" read-only") } }
}

/// Opens connections the way libpq does with several hosts and `target_session_attrs=read-write`: each
/// host in turn, keeping the first that is a writable primary. Every socket gets TCP keepalives and
/// `TCP_USER_TIMEOUT` (`DeadPeerDetection`), which PostgresNIO's own connect does not set: the socket is
/// connected here and handed to `PostgresConnection` as an established channel.
public struct DatabaseConnector: Sendable {
    public let url: DatabaseURL
    public var detection: DeadPeerDetection
    let eventLoopGroup: any EventLoopGroup

    /// Creates a connector for `url`.
    public init(
        url: DatabaseURL, detection: DeadPeerDetection = DeadPeerDetection(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.url = url
        self.detection = detection
        self.eventLoopGroup = eventLoopGroup
    }

    /// A connection to the first host that is a writable primary, with the endpoint it is on.
    public func connectPrimary(id: Int, logger: Logger) async throws -> (PostgresConnection, DatabaseURL.Endpoint) {
        var outcomes: [String] = []
        for endpoint in url.endpoints {
            let connection: PostgresConnection
            do {
                connection = try await connect(to: endpoint, id: id, logger: logger)
            } catch {
                outcomes.append("\(endpoint) unreachable (\(DatabaseErrorSummary(error)))")
                continue
            }
            do {
                let role = try await withDeadline(url.connectTimeout) { try await Self.role(of: connection, logger: logger) }
                if role == .primary { return (connection, endpoint) }
                outcomes.append("\(endpoint) \(role.rawValue)")
            } catch {
                outcomes.append("\(endpoint) unreachable (\(DatabaseErrorSummary(error)))")
            }
            try? await connection.close()
        }
        throw NoWritablePrimary(outcomes: outcomes)
    }

    /// A connection to `endpoint` (or the unix socket), bounded by `connect_timeout`, with dead-peer detection.
    public func connect(to endpoint: DatabaseURL.Endpoint, id: Int, logger: Logger) async throws -> PostgresConnection {
        let url = self.url
        let detection = self.detection
        let group = eventLoopGroup
        // A connection that completes after the deadline or a cancellation is closed, not dropped open.
        return try await withDeadline(url.connectTimeout, discard: { try? await $0.close() }) {
            var bootstrap = ClientBootstrap(group: group)
                .connectTimeout(.milliseconds(url.connectTimeout.wholeMilliseconds))
                .channelOption(.socketOption(.so_keepalive), value: 1)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            #if os(Linux)
                bootstrap =
                    bootstrap
                    .channelOption(.socket(SocketOptionLevel(IPPROTO_TCP), SocketOptionName(TCP_KEEPIDLE)), value: Self.seconds(detection.idle))
                    .channelOption(.socket(SocketOptionLevel(IPPROTO_TCP), SocketOptionName(TCP_KEEPINTVL)), value: Self.seconds(detection.interval))
                    .channelOption(.socket(SocketOptionLevel(IPPROTO_TCP), SocketOptionName(TCP_KEEPCNT)), value: SocketOptionValue(detection.count))
                    .channelOption(
                        .socket(SocketOptionLevel(IPPROTO_TCP), SocketOptionName(18 /* TCP_USER_TIMEOUT */)),
                        value: SocketOptionValue(detection.userTimeout.wholeMilliseconds))
            #endif
            let channel: any Channel
            if let socketPath = url.socketPath {
                channel = try await ClientBootstrap(group: group).connect(unixDomainSocketPath: socketPath).get()
            } else {
                channel = try await bootstrap.connect(host: endpoint.host, port: endpoint.port).get()
            }
            var configuration = PostgresConnection.Configuration(
                establishedChannel: channel, tls: try url.connectionTLS(), username: url.username, password: url.password, database: url.database)
            if url.tls != .verifyCA, url.tls != .disable { configuration.options.tlsServerName = endpoint.host }
            if let name = url.applicationName { configuration.options.additionalStartupParameters.append(("application_name", name)) }
            do {
                return try await PostgresConnection.connect(on: channel.eventLoop, configuration: configuration, id: id, logger: logger)
            } catch {
                try? await channel.close()
                throw error
            }
        }
    }

    /// The server's role, from one round trip.
    public static func role(of connection: PostgresConnection, logger: Logger) async throws -> ServerRole {
        let rows = try await connection.query(
            "SELECT pg_is_in_recovery(), current_setting('transaction_read_only') = 'on'", logger: logger
        ).collect()
        guard let row = rows.first else { return .standby }
        let (recovering, readOnly) = try row.decode((Bool, Bool).self)
        return recovering ? .standby : (readOnly ? .readOnly : .primary)
    }

    private static func seconds(_ duration: Duration) -> SocketOptionValue {
        SocketOptionValue(max(1, duration.wholeMilliseconds / 1000))
    }
}
