import Foundation

/// Identity of one dispatcher process, as shown to operators.
public struct DispatcherIdentity: Sendable, Hashable {
    /// Random id of this process's registration.
    public var id: UUID
    /// Host name.
    public var host: String
    /// Process id.
    public var pid: Int32
    /// The `--role` the process runs with.
    public var role: String
    /// Software version.
    public var version: String
    /// The platforms this process pushes (`SECUREPUSH_PROVIDERS`): the support lookup names a platform no live
    /// dispatcher pushes.
    public var platforms: [Platform]

    /// Creates an identity.
    public init(id: UUID, host: String, pid: Int32, role: String, version: String, platforms: [Platform] = []) {
        self.id = id
        self.host = host
        self.pid = pid
        self.role = role
        self.version = version
        self.platforms = platforms
    }
}

/// The LISTEN connection's state, as a heartbeat reports it.
public struct ListenerStatus: Sendable, Hashable {
    /// Whether the connection is up and listening.
    public var connected: Bool
    /// When it last heard from the database (a notification or a liveness probe).
    public var lastHeard: Date?

    /// Creates a status.
    public init(connected: Bool, lastHeard: Date?) {
        self.connected = connected
        self.lastHeard = lastHeard
    }
}

/// The seam to the fleet registry: heartbeats with running counts.
public protocol DispatcherRegistry: Sendable {
    /// Records (or refreshes) the process as alive with its cumulative counts, the circuit breakers that
    /// are not closed and its LISTEN connection's state (`nil`: not reported).
    func heartbeat(_ identity: DispatcherIdentity, sent: Int64, failed: Int64, circuits: [CircuitSnapshot], listener: ListenerStatus?) async throws
    /// Marks the process stopped (its circuits are cleared).
    func stopped(_ identity: DispatcherIdentity, sent: Int64, failed: Int64) async throws
    /// How many dispatchers are live: not stopped, and heard from within `within` (the fleet a push rate is
    /// shared by).
    func liveDispatchers(within: Duration) async throws -> Int
}

extension DispatcherRegistry {
    /// A heartbeat that does not report the LISTEN connection.
    public func heartbeat(_ identity: DispatcherIdentity, sent: Int64, failed: Int64, circuits: [CircuitSnapshot]) async throws {
        try await heartbeat(identity, sent: sent, failed: failed, circuits: circuits, listener: nil)
    }
}
