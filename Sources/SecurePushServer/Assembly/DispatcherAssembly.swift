import Foundation
import Logging
import PostgresNIO
import SecurePushCore
import SecurePushDispatcher
import SecurePushPostgres
import SecurePushStore
import ServiceLifecycle

/// The services one dispatcher process runs, wired to one database client.
public struct DispatcherAssembly: Sendable {
    /// The claim/send/complete loops.
    public let dispatcher: Dispatcher
    /// The dedicated LISTEN connection.
    public let listener: NotificationListener
    /// Lease rescue, expiry and pruning.
    public let maintenance: MaintenanceService
    /// Makes scheduled deliveries claimable when they become due.
    public let schedule: ScheduleService
    /// The heartbeat row.
    public let heartbeat: HeartbeatService
    /// Running counts.
    public let stats: DispatcherStats
    /// The process's registration.
    public let identity: DispatcherIdentity

    /// The size of a dispatcher's own database pool, for `serve` and the bench alike: two connections per lane and
    /// two more for maintenance and heartbeats, at least 4.
    public static func databasePoolSize(_ configuration: DispatcherConfiguration) -> Int {
        max(4, configuration.lanes * 2 + 2)
    }

    /// Wires a dispatcher to `client` with the given providers.
    public init(
        client: any DatabaseClient,
        databaseURL: DatabaseURL,
        providers: [any PushProvider],
        configuration: DispatcherConfiguration,
        role: String = "dispatcher",
        logger: Logger
    ) throws {
        let signal = WakeSignal()
        let stats = DispatcherStats()
        let identity = DispatcherIdentity(
            id: UUID(),
            host: ProcessInfo.processInfo.hostName,
            pid: ProcessInfo.processInfo.processIdentifier,
            role: role,
            version: SecurePushVersion.current,
            platforms: providers.map(\.platform)
        )
        var logger = logger
        logger[metadataKey: "dispatcher.id"] = "\(identity.id)"
        self.identity = identity
        self.stats = stats
        self.dispatcher = Dispatcher(
            queue: PostgresDeliveryQueue(
                client: client, logger: logger, unreadBadge: configuration.unreadBadge, replicationGate: configuration.replicationGate,
                sealedPreviews: configuration.sealedPreviews),
            providers: providers,
            configuration: configuration,
            signal: signal,
            stats: stats,
            workerID: identity.id,
            logger: logger
        )
        self.listener = NotificationListener(
            connector: DatabaseConnector(url: databaseURL),
            signal: signal,
            stats: stats,
            logger: logger
        )
        self.maintenance = MaintenanceService(
            maintenance: PostgresQueueMaintenance(client: client, logger: logger),
            configuration: configuration,
            signal: signal,
            recipients: dispatcher.badgeRecipients,
            logger: logger
        )
        self.schedule = ScheduleService(
            maintenance: PostgresQueueMaintenance(client: client, logger: logger),
            configuration: configuration,
            signal: signal,
            logger: logger
        )
        self.heartbeat = HeartbeatService(
            registry: PostgresDispatcherRegistry(client: client, logger: logger),
            identity: identity,
            stats: stats,
            interval: configuration.heartbeatInterval,
            circuits: { [breakers = dispatcher.breakers] in breakers.snapshots() },
            pacer: dispatcher.pacer,
            logger: logger
        )
    }

    /// In the order a service group starts them (it shuts them down in reverse: the dispatcher drains first).
    public var services: [any Service] {
        [listener, heartbeat, maintenance, schedule, dispatcher]
    }
}
