import SecurePushPostgres

/// The push relay's migrations compiled into this build (`sql/relay/`, embedded at build time by
/// `Plugins/EmbedMigrations`), for the relay's own database (schema `securepush_relay`).
public enum RelayMigrations {
    /// The migrations, in version order.
    public static func bundled() throws -> [Migration] {
        try Migration.decode(EmbeddedRelayMigrations.files)
    }

    /// The relay's migrator.
    public static func migrator() throws -> Migrator {
        Migrator(migrations: try bundled(), schema: "securepush_relay")
    }
}
