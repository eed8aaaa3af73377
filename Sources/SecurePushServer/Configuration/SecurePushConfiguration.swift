import Foundation
import Logging
import SecurePushCore
import SecurePushDispatcher
import SecurePushPostgres
import SecurePushStore

/// Everything a SecurePush process is configured with, read from environment variables
/// (command-line flags are merged over them first). See docs/configuration.md.
public struct SecurePushConfiguration: Sendable {
    /// The database and the settings every command shares.
    public var database: DatabaseConfiguration
    public var role: ServerRole
    public var dispatcher: DispatcherConfiguration
    public var databasePoolSize: Int
    /// Device fetch statements one API process runs at once (`SECUREPUSH_READ_STATEMENTS`); the fetches
    /// that arrive meanwhile share the next ones.
    public var readStatements: Int
    /// Whether the dispatcher's claims and outcomes wait for a WAL flush (`SECUREPUSH_DISPATCHER_SYNCHRONOUS_COMMIT`).
    public var dispatcherSynchronousCommit: Bool
    /// Platforms this process pushes to (`SECUREPUSH_PROVIDERS`), directly or through the relay.
    public var providers: [Platform]
    /// The push relay the platforms of `RelayClientSettings.platforms` go through (`relay` in
    /// `SECUREPUSH_PROVIDERS`); `nil` when none.
    public var relayClient: RelayClientSettings?
    /// The outcome webhook, when `SECUREPUSH_WEBHOOK_URL` is set (posted by the dispatchers).
    public var webhook: WebhookSettings?
    /// OpenTelemetry traces, when `SECUREPUSH_OTEL_ENDPOINT` is set.
    public var tracing: TracingSettings?
    public var simulatedOutboxPath: String?
    /// A delay the simulated platform adds to each push (`SECUREPUSH_SIMULATED_LATENCY`), standing in for the network.
    public var simulatedLatency: Duration?
    /// Whose request the simulated platform builds and records (`SECUREPUSH_SIMULATED_ENVELOPE`: `apns`, the
    /// default, or `fcm`): the Android kit's tests parse the FCM request the dispatcher really built.
    public var simulatedEnvelope: Platform = .apns
    /// Credentials and endpoints of the real platforms in `providers` (see docs/providers.md).
    public var providerSettings: ProviderSettings
    public var http: HTTPConfiguration
    /// The relay role's settings (read always; required ones only for `--role relay`).
    public var relay: RelayConfiguration

    /// `securepush serve`'s command-line flags: typed values that take precedence over the environment
    /// and are checked against the same ranges.
    public struct Overrides: Sendable {
        public var databaseURL: String?
        public var logLevel: Logger.Level?
        public var role: ServerRole?
        public var host: String?
        public var port: Int?
        public var concurrency: Int?
        public var batchSize: Int?
        public var pollInterval: Duration?
        /// A comma-separated platform list, as `SECUREPUSH_PROVIDERS`.
        public var providers: String?

        /// No overrides.
        public init() {}
    }

    /// The database URL (`DATABASE_URL`).
    public var databaseURL: DatabaseURL {
        get { database.url }
        set { database.url = newValue }
    }

    /// Parses and validates the configuration.
    public init(environment: [String: String], overrides: Overrides = Overrides()) throws {
        let values = ConfigurationValues(environment)
        self.database = try DatabaseConfiguration(values: values, databaseURL: overrides.databaseURL, logLevel: overrides.logLevel)
        if let role = overrides.role {
            self.role = role
        } else {
            self.role = ServerRole(rawValue: try values.choice("SECUREPUSH_ROLE", default: "all", allowed: ServerRole.allCases.map(\.rawValue)))!
        }

        var dispatcher = DispatcherConfiguration()
        dispatcher.concurrency = try values.int(
            "SECUREPUSH_CONCURRENCY", flag: overrides.concurrency, default: dispatcher.concurrency, in: DispatcherConfiguration.concurrencyRange)
        dispatcher.batchSize = try values.int(
            "SECUREPUSH_BATCH_SIZE", flag: overrides.batchSize, default: dispatcher.batchSize, in: DispatcherConfiguration.batchSizeRange)
        dispatcher.lanes = try values.int("SECUREPUSH_LANES", default: dispatcher.lanes, in: 1...64)
        dispatcher.pollInterval = try values.duration(
            "SECUREPUSH_POLL_INTERVAL", flag: overrides.pollInterval, default: dispatcher.pollInterval, in: DispatcherConfiguration.pollIntervalRange)
        dispatcher.leaseDuration = try values.duration(
            "SECUREPUSH_LEASE", default: dispatcher.leaseDuration, in: .seconds(1)...(.seconds(3600)))
        dispatcher.shutdownGracePeriod = try values.duration(
            "SECUREPUSH_SHUTDOWN_GRACE", default: dispatcher.shutdownGracePeriod, in: .zero...(.seconds(600)))
        dispatcher.retry.maxAttempts = try values.int("SECUREPUSH_MAX_ATTEMPTS", default: dispatcher.retry.maxAttempts, in: 1...100)
        dispatcher.retry.baseDelay = try values.duration(
            "SECUREPUSH_RETRY_BASE", default: dispatcher.retry.baseDelay, in: .milliseconds(1)...(.seconds(3600)))
        dispatcher.retry.maxDelay = try values.duration(
            "SECUREPUSH_RETRY_MAX", default: dispatcher.retry.maxDelay, in: .milliseconds(1)...(.seconds(86_400)))
        guard dispatcher.retry.maxDelay >= dispatcher.retry.baseDelay else {
            throw ConfigurationError("SECUREPUSH_RETRY_MAX must not be shorter than SECUREPUSH_RETRY_BASE")
        }
        dispatcher.retention = try values.duration(
            "SECUREPUSH_RETENTION", default: dispatcher.retention, in: .seconds(60)...(.seconds(3650 * 86_400)))
        dispatcher.maintenanceInterval = try values.duration(
            "SECUREPUSH_MAINTENANCE_INTERVAL", default: dispatcher.maintenanceInterval, in: .milliseconds(100)...(.seconds(3600)))
        dispatcher.badgeFoldInterval = try values.duration(
            "SECUREPUSH_BADGE_FOLD_INTERVAL", default: dispatcher.badgeFoldInterval, in: .milliseconds(100)...(.seconds(3600)))
        dispatcher.databaseTimeout = try values.duration(
            "SECUREPUSH_DB_TIMEOUT", default: dispatcher.databaseTimeout, in: .seconds(1)...(.seconds(600)))
        dispatcher.deviceStaleAfter = try values.duration(
            "SECUREPUSH_DEVICE_STALE_AFTER", default: dispatcher.deviceStaleAfter, in: .seconds(60)...(.seconds(3650 * 86_400)))
        dispatcher.deviceRetention = try values.duration(
            "SECUREPUSH_DEVICE_RETENTION", default: dispatcher.deviceRetention, in: .seconds(60)...(.seconds(3650 * 86_400)))
        dispatcher.auditRetention = try values.duration(
            "SECUREPUSH_AUDIT_RETENTION", default: dispatcher.auditRetention, in: .seconds(60)...(.seconds(3650 * 86_400)))
        dispatcher.heartbeatInterval = try values.duration(
            "SECUREPUSH_HEARTBEAT_INTERVAL", default: dispatcher.heartbeatInterval, in: .milliseconds(100)...(.seconds(3600)))
        dispatcher.unreadBadge = try values.choice("SECUREPUSH_BADGE", default: "unread", allowed: ["unread", "off"]) == "unread"
        dispatcher.circuitBreaker = try Self.circuitBreaker(values)
        let maxPushRate = try values.int("SECUREPUSH_MAX_PUSH_RATE", default: 0, in: DispatcherConfiguration.maxPushRateRange)
        dispatcher.maxPushRate = maxPushRate > 0 ? Double(maxPushRate) : nil
        dispatcher.replicationGate = try values.choice("SECUREPUSH_REPLICATION_GATE", default: "off", allowed: ["on", "off"]) == "on"
        dispatcher.sealedPreviews = try values.choice("SECUREPUSH_SEALED_PREVIEWS", default: "off", allowed: ["on", "off"]) == "on"
        self.dispatcher = dispatcher

        self.databasePoolSize = try values.int("SECUREPUSH_DB_POOL_SIZE", default: 20, in: 2...1000)
        self.readStatements = try values.int(
            "SECUREPUSH_READ_STATEMENTS", default: NotificationStore.defaultReadStatements, in: 1...databasePoolSize)
        self.dispatcherSynchronousCommit =
            try values.choice("SECUREPUSH_DISPATCHER_SYNCHRONOUS_COMMIT", default: "off", allowed: ["on", "off"]) == "on"
        // Unset means the simulated platform; set but empty means none (which `serve` refuses for a dispatcher).
        let (direct, relay) = try Self.parseProviders(overrides.providers ?? values.values["SECUREPUSH_PROVIDERS"] ?? Platform.simulated.rawValue)
        self.relayClient = relay ? try RelayClientSettings(values: values, direct: direct) : nil
        self.webhook = try WebhookSettings(values: values)
        self.tracing = try TracingSettings(values: values)
        self.providers = direct + (relayClient?.platforms ?? [])
        self.simulatedOutboxPath = values.string("SECUREPUSH_SIMULATED_OUTBOX")
        let latency = try values.duration("SECUREPUSH_SIMULATED_LATENCY", default: .zero, in: .zero...(.seconds(60)))
        self.simulatedLatency = latency > .zero ? latency : nil
        self.simulatedEnvelope =
            try values.choice("SECUREPUSH_SIMULATED_ENVELOPE", default: "apns", allowed: ["apns", "fcm"]) == "fcm" ? .fcm : .apns
        self.providerSettings = try ProviderSettings(values: values, platforms: direct)
        self.dispatcher.endpointPolicies = providerSettings.endpointPolicies
        self.http = try HTTPConfiguration(values: values, host: overrides.host, port: overrides.port)
        self.relay = try RelayConfiguration(values: values, required: role == .relay)
    }

    /// The log level (`SECUREPUSH_LOG_LEVEL`).
    public var logLevel: Logger.Level { database.logLevel }

    /// The default TTL (`SECUREPUSH_DEFAULT_TTL`).
    public var defaultTTL: Duration { database.defaultTTL }

    /// The names of a comma-separated setting, trimmed and lowercased, empty ones left out.
    static func listNames(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
    }

    /// The platforms pushed directly, and whether `relay` is listed (the platforms of `SECUREPUSH_RELAY_PLATFORMS`
    /// pushed through a vendor's relay, `RelayClientSettings`).
    static func parseProviders(_ text: String) throws -> (direct: [Platform], relay: Bool) {
        var platforms: [Platform] = []
        var relay = false
        for name in listNames(text) {
            if name == "relay" {
                relay = true
                continue
            }
            guard let platform = Platform(rawValue: name) else {
                throw ConfigurationError(
                    "SECUREPUSH_PROVIDERS lists unknown platform \"\(name)\"; known: \(Platform.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            if !platforms.contains(platform) { platforms.append(platform) }
        }
        return (platforms, relay)
    }
}
