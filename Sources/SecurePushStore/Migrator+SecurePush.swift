import Logging
import PostgresNIO
import SecurePushPostgres

extension Migrator {
    /// The migration that made `securepush.time_zones`, refreshed after every migrate from then on.
    static let timeZonesVersion = 22

    /// SecurePush's migrator for `migrations` (`Migration.bundled()`, or a prefix of it in the upgrade tests):
    /// recorded in schema `securepush`, and, once the migrations include 022, refreshing the time zones after
    /// every migrate (those a newer tzdata added: quiet hours accept only known names).
    public static func securePush(_ migrations: [Migration]) -> Migrator {
        guard migrations.contains(where: { $0.version >= timeZonesVersion }) else {
            return Migrator(migrations: migrations, schema: "securepush")
        }
        return Migrator(migrations: migrations, schema: "securepush", afterMigrate: refreshTimeZones)
    }

    /// Adds the time zones a newer tzdata brought since the last migrate.
    @Sendable static func refreshTimeZones(on connection: PostgresConnection, logger: Logger) async throws {
        _ = try await connection.query("SELECT securepush.refresh_time_zones()", logger: logger)
    }
}
