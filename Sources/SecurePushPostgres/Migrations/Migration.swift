import Crypto
import Foundation
import SecurePushCore

/// One numbered SQL file (`sql/NNN_name.sql`, or the relay's `sql/relay/`), run by a `Migrator`.
public struct Migration: Sendable, Hashable {
    /// The number the file name starts with.
    public var version: Int
    /// The file name, for example `001_core_schema.sql`.
    public var name: String
    /// The SQL text.
    public var sql: String
    /// SHA-256 of the file, hex; an applied file whose checksum changed is refused.
    public var checksum: String
    /// The oldest build that may run on a schema with this migration, from the file's header line
    /// `-- securepush: oldest build X.Y.Z` (written by `ops/release-migration`; `nil` without one: only builds
    /// that know the file). Recorded when applied, so an older build that restarts after a rolling upgrade's
    /// migration can tell that the newer schema still serves it (docs/operations.md § Upgrading).
    public var oldestBuild: String?

    /// The header line that declares `oldestBuild`.
    public static let oldestBuildPrefix = "-- securepush: oldest build "

    /// Creates a migration from its file name and text.
    public init(name: String, sql: String) throws {
        guard let prefix = name.split(separator: "_").first, let version = Int(prefix), name.hasSuffix(".sql") else {
            throw MigrationError("migration file \(name) must be named NNN_description.sql")
        }
        self.version = version
        self.name = name
        self.sql = sql
        self.checksum = SHA256.hash(data: Data(sql.utf8)).hexEncoded
        self.oldestBuild = sql.split(separator: "\n", maxSplits: 20).lazy
            .first { $0.hasPrefix(Self.oldestBuildPrefix) }
            .map { String($0.dropFirst(Self.oldestBuildPrefix.count)).trimmingCharacters(in: .whitespaces) }
    }

    /// Whether a file in `sql/` is a migration: `NNN_description.sql` (`schema.sql`, the generated dump, is not).
    /// The build plugin that embeds them (`Plugins/EmbedMigrations`) applies the same rule; it cannot import this module.
    public static func isMigrationFileName(_ name: String) -> Bool {
        guard name.hasSuffix(".sql"), let underscore = name.firstIndex(of: "_") else { return false }
        let prefix = name[..<underscore]
        return !prefix.isEmpty && prefix.allSatisfy(\.isASCII) && prefix.allSatisfy(\.isNumber)
    }

    /// The migrations a build embedded (`Plugins/EmbedMigrations`: name and base64 text per file), in version order.
    public static func decode(_ files: [(name: String, base64: String)]) throws -> [Migration] {
        try files.map { file in
            guard let data = Data(base64Encoded: file.base64) else {
                throw MigrationError("embedded migration \(file.name) is corrupt")
            }
            return try Migration(name: file.name, sql: String(decoding: data, as: UTF8.self))
        }.sorted { $0.version < $1.version }
    }
}

/// A migration problem: an edited applied file, an unknown applied version, a failing statement.
public struct MigrationError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, naming the file.
    public var message: String

    /// Creates an error.
    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
