import Foundation
import Logging
import SecurePushCore
import SecurePushPostgres
import SecurePushReports
import SecurePushStore

/// What every command needs, and all that `migrate` and `status` read: the database, the log level and
/// the settings they write or show. Reading it never touches push-provider credentials.
public struct DatabaseConfiguration: Sendable {
    /// `DATABASE_URL` (or `--database-url`).
    public var url: DatabaseURL
    /// How long `serve` and `migrate` retry their start-up check while the database is unreachable, a
    /// standby or not yet migrated (`SECUREPUSH_STARTUP_WAIT`, default 0: fail at once).
    public var startupWait: Duration
    /// `SECUREPUSH_LOG_LEVEL` (or `--log-level`).
    public var logLevel: Logger.Level
    /// Text or JSON lines (`SECUREPUSH_LOG_FORMAT`, default text).
    public var logFormat: LogFormat
    /// The TTL of notifications inserted without one (`SECUREPUSH_DEFAULT_TTL`), written to the database.
    public var defaultTTL: Duration
    /// A dispatcher without a heartbeat for this long shows as stale (`SECUREPUSH_DISPATCHER_STALE_AFTER`).
    public var dispatcherStaleAfter: Duration
    /// When `/status` says "degraded" (`SECUREPUSH_HEALTH_MAX_LAG`, `SECUREPUSH_HEALTH_MAX_FEED_LAG`, `SECUREPUSH_HEALTH_MIN_FETCH_RATIO` in percent).
    public var statusThresholds = StatusThresholds()
    /// Active devices per user (`SECUREPUSH_MAX_DEVICES_PER_USER`), written to the database; one more
    /// retires the user's least recently seen device.
    public var maxDevicesPerUser: Int
    /// Read sync (`SECUREPUSH_READ_SYNC=on|off`, default on): reading a notification sends `clear` pushes to
    /// the user's other devices that received it, written to the database.
    public var readSync: Bool
    /// At most one clear push per device per this window (`SECUREPUSH_READ_SYNC_WINDOW`, default 2 s).
    public var readSyncWindow: Duration
    /// Device registrations per user in any hour (`SECUREPUSH_MAX_REGISTRATIONS_PER_HOUR`, default 60; 0
    /// turns the limit off), written to the database; one more answers 429.
    public var maxRegistrationsPerHour: Int
    /// Whether producers may enqueue `critical` notifications (`SECUREPUSH_CRITICAL_URGENCY=on|off`, default
    /// off; on iOS they also need Apple's critical-alerts entitlement), written to the database.
    public var criticalUrgency: Bool

    /// The settings written to the database.
    public var deploymentSettings: DeploymentSettings {
        DeploymentSettings(
            defaultTTL: defaultTTL, maxDevicesPerUser: maxDevicesPerUser, readSync: readSync, readSyncWindow: readSyncWindow,
            maxRegistrationsPerHour: maxRegistrationsPerHour, criticalUrgency: criticalUrgency)
    }

    /// Reads the settings; `databaseURL` and `logLevel` (command-line flags) take precedence. Without either a flag
    /// or `SECUREPUSH_LOG_LEVEL`, the level is `defaultLogLevel` (`serve`: info; the other commands: warning, so
    /// that they print their answer alone).
    public init(values: ConfigurationValues, databaseURL: String? = nil, logLevel: Logger.Level? = nil, defaultLogLevel: Logger.Level = .info)
        throws
    {
        guard let url = databaseURL ?? values.string("DATABASE_URL") else {
            throw ConfigurationError("DATABASE_URL is not set (postgres://user:password@host:port/database)")
        }
        self.url = try DatabaseURL(url, environment: values.strings(DatabaseURL.environmentDefaults.keys))
        _ = try self.url.tlsConfiguration()  // unreadable certificate files fail here, with a message naming them
        if let logLevel {
            self.logLevel = logLevel
        } else {
            let names = Logger.Level.allCases.map(\.rawValue)
            self.logLevel = Logger.Level(rawValue: try values.choice("SECUREPUSH_LOG_LEVEL", default: defaultLogLevel.rawValue, allowed: names))!
        }
        self.logFormat = LogFormat(
            rawValue: try values.choice("SECUREPUSH_LOG_FORMAT", default: LogFormat.text.rawValue, allowed: LogFormat.allCases.map(\.rawValue)))!
        self.defaultTTL = try values.duration("SECUREPUSH_DEFAULT_TTL", default: .seconds(7 * 86_400), in: .seconds(1)...(.seconds(365 * 86_400)))
        self.startupWait = try values.duration("SECUREPUSH_STARTUP_WAIT", default: .zero, in: .zero...(.seconds(86_400)))
        self.maxDevicesPerUser = try values.int("SECUREPUSH_MAX_DEVICES_PER_USER", default: 20, in: 1...10_000)
        self.maxRegistrationsPerHour = try values.int("SECUREPUSH_MAX_REGISTRATIONS_PER_HOUR", default: 60, in: 0...100_000)
        self.readSync = try values.choice("SECUREPUSH_READ_SYNC", default: "on", allowed: ["on", "off"]) == "on"
        self.criticalUrgency = try values.choice("SECUREPUSH_CRITICAL_URGENCY", default: "off", allowed: ["on", "off"]) == "on"
        self.readSyncWindow = try values.duration("SECUREPUSH_READ_SYNC_WINDOW", default: .seconds(2), in: .zero...(.seconds(3600)))
        self.dispatcherStaleAfter = try values.duration(
            "SECUREPUSH_DISPATCHER_STALE_AFTER", default: .seconds(30), in: .seconds(1)...(.seconds(86_400)))
        statusThresholds.maxQueueLag = try values.duration(
            "SECUREPUSH_HEALTH_MAX_LAG", default: statusThresholds.maxQueueLag, in: .seconds(1)...(.seconds(86_400)))
        statusThresholds.maxFeedLag = try values.duration(
            "SECUREPUSH_HEALTH_MAX_FEED_LAG", default: statusThresholds.maxFeedLag, in: .seconds(1)...(.seconds(86_400)))
        statusThresholds.minFetchRatio =
            Double(try values.int("SECUREPUSH_HEALTH_MIN_FETCH_RATIO", default: Int(statusThresholds.minFetchRatio * 100), in: 0...100)) / 100
    }
}
