import SecurePushPostgres

extension Migration {
    /// The migrations compiled into this build (the repository's `sql/` folder, embedded at build time by
    /// `Plugins/EmbedMigrations`).
    public static func bundled() throws -> [Migration] {
        try decode(EmbeddedMigrations.files)
    }
}
