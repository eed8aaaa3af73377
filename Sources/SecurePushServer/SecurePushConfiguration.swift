import Foundation
import Logging
import SecurePushCore
import SecurePushDispatcher
import SecurePushStore

/// Everything a SecurePush process is configured with, read from environment variables
/// (command-line flags are merged over them first). See the README's configuration table.
public struct SecurePushConfiguration: Sendable {
    public var databaseURL: DatabaseURL
    public var role: ServerRole
    public var dispatcher: DispatcherConfiguration
    public var defaultTTL: Duration
    public var databasePoolSize: Int
    /// Whether the dispatcher's claims and outcomes wait for a WAL flush (`SECUREPUSH_DISPATCHER_SYNCHRONOUS_COMMIT`).
    public var dispatcherSynchronousCommit: Bool
    /// Platforms this process pushes to (`SECUREPUSH_PROVIDERS`).
    public var providers: [Platform]
    public var simulatedOutboxPath: String?
    /// A delay the simulated platform adds to each push (`SECUREPUSH_SIMULATED_LATENCY`), standing in for the network.
    public var simulatedLatency: Duration?
    /// Credentials and endpoints of the real platforms in `providers` (see docs/providers.md).
    public var providerSettings: ProviderSettings
    public var logLevel: Logger.Level
    public var http: HTTPConfiguration

    /// Parses and validates the configuration.
    public init(environment: [String: String]) throws {
        let values = ConfigurationValues(environment)
        guard let url = values.string("DATABASE_URL") else {
            throw ConfigurationError("DATABASE_URL is not set (postgres://user:password@host:port/database)")
        }
        self.databaseURL = try DatabaseURL(url)
        self.role = ServerRole(rawValue: try values.choice("SECUREPUSH_ROLE", default: "all", allowed: ServerRole.allCases.map(\.rawValue)))!

        var dispatcher = DispatcherConfiguration()
        dispatcher.concurrency = try values.int("SECUREPUSH_CONCURRENCY", default: dispatcher.concurrency, in: 1...10_000)
        dispatcher.batchSize = try values.int("SECUREPUSH_BATCH_SIZE", default: dispatcher.batchSize, in: 1...10_000)
        dispatcher.lanes = try values.int("SECUREPUSH_LANES", default: dispatcher.lanes, in: 1...64)
        dispatcher.pollInterval = try values.duration(
            "SECUREPUSH_POLL_INTERVAL", default: dispatcher.pollInterval, in: .milliseconds(10)...(.seconds(300)))
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
        dispatcher.databaseTimeout = try values.duration(
            "SECUREPUSH_DB_TIMEOUT", default: dispatcher.databaseTimeout, in: .seconds(1)...(.seconds(600)))
        dispatcher.heartbeatInterval = try values.duration(
            "SECUREPUSH_HEARTBEAT_INTERVAL", default: dispatcher.heartbeatInterval, in: .milliseconds(100)...(.seconds(3600)))
        self.dispatcher = dispatcher

        self.defaultTTL = try values.duration("SECUREPUSH_DEFAULT_TTL", default: .seconds(7 * 86_400), in: .seconds(1)...(.seconds(365 * 86_400)))
        self.databasePoolSize = try values.int("SECUREPUSH_DB_POOL_SIZE", default: 20, in: 2...1000)
        self.dispatcherSynchronousCommit =
            try values.choice("SECUREPUSH_DISPATCHER_SYNCHRONOUS_COMMIT", default: "off", allowed: ["on", "off"]) == "on"
        self.providers = try Self.parseProviders(values.string("SECUREPUSH_PROVIDERS") ?? "simulated")
        self.simulatedOutboxPath = values.string("SECUREPUSH_SIMULATED_OUTBOX")
        let latency = try values.duration("SECUREPUSH_SIMULATED_LATENCY", default: .zero, in: .zero...(.seconds(60)))
        self.simulatedLatency = latency > .zero ? latency : nil
        self.providerSettings = try ProviderSettings(values: values, platforms: providers)
        let level = try values.choice(
            "SECUREPUSH_LOG_LEVEL", default: "info", allowed: ["trace", "debug", "info", "notice", "warning", "error", "critical"])
        self.logLevel = Logger.Level(rawValue: level)!
        self.http = try HTTPConfiguration(values: values)
    }

    static func parseProviders(_ text: String) throws -> [Platform] {
        var platforms: [Platform] = []
        for name in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) where !name.isEmpty {
            guard let platform = Platform(rawValue: name) else {
                throw ConfigurationError(
                    "SECUREPUSH_PROVIDERS lists unknown platform \"\(name)\"; known: \(Platform.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            if !platforms.contains(platform) { platforms.append(platform) }
        }
        return platforms
    }
}
