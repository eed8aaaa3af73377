/// The deployment settings the database's own SQL reads (`securepush.settings`), written by `migrate` and
/// at start-up from configuration.
public struct DeploymentSettings: Sendable, Hashable {
    /// The TTL of notifications inserted without `expires_at` (`SECUREPUSH_DEFAULT_TTL`).
    public var defaultTTL: Duration
    /// Active devices per user (`SECUREPUSH_MAX_DEVICES_PER_USER`).
    public var maxDevicesPerUser: Int
    /// Whether reading a notification sends `clear` pushes to the user's other devices (`SECUREPUSH_READ_SYNC`).
    public var readSync: Bool
    /// How long a device's clear waits for more reads to coalesce (`SECUREPUSH_READ_SYNC_WINDOW`): at most
    /// one clear push per device per window.
    public var readSyncWindow: Duration
    /// Registrations per user in any hour (`SECUREPUSH_MAX_REGISTRATIONS_PER_HOUR`; 0 turns the limit off).
    public var maxRegistrationsPerHour: Int
    /// Whether producers may enqueue `critical` notifications (`SECUREPUSH_CRITICAL_URGENCY`); the database
    /// refuses them otherwise.
    public var criticalUrgency: Bool

    /// Creates the settings.
    public init(
        defaultTTL: Duration, maxDevicesPerUser: Int, readSync: Bool = true, readSyncWindow: Duration = .seconds(2),
        maxRegistrationsPerHour: Int = 60, criticalUrgency: Bool = false
    ) {
        self.defaultTTL = defaultTTL
        self.maxDevicesPerUser = maxDevicesPerUser
        self.readSync = readSync
        self.readSyncWindow = readSyncWindow
        self.maxRegistrationsPerHour = maxRegistrationsPerHour
        self.criticalUrgency = criticalUrgency
    }
}
