import Foundation
import SecurePushPostgres
import SecurePushStore
import Testing

/// `sql/checksums.sha256` pins every migration's text (`cd sql && sha256sum -c checksums.sha256`).
/// A migration on main is immutable: databases have applied it and record its checksum, and
/// `Migrator` refuses to run when an applied file changed. A change to the schema is a new file.
@Suite("Migration manifest")
struct MigrationManifestTests {
    static let sqlDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("sql")
    static let manifestName = "checksums.sha256"

    /// The manifest as file name → hex checksum.
    static func manifest() throws -> [String: String] {
        try checksumLines(of: manifestName).reduce(into: [:]) { $0[$1.name] = $1.checksum }
    }

    /// A checksum list's lines in order, in `sha256sum` format (`<hex>  <file>`, or `<hex> *<file>`);
    /// lines starting with `#` are comments. `text` is the file's content when it is not read from `sql/`.
    static func checksumLines(of fileName: String, text: String? = nil, in directory: URL = sqlDirectory) throws -> [(
        checksum: String, name: String
    )] {
        let text = try text ?? String(contentsOf: directory.appendingPathComponent(fileName), encoding: .utf8)
        var lines: [(checksum: String, name: String)] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: true).enumerated() where !line.hasPrefix("#") {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].count == 64, parts[0].allSatisfy(\.isHexDigit) else {
                throw ManifestError("sql/\(fileName) line \(index + 1) is not `<sha256 hex>  <file>`: \(line)")
            }
            var name = String(parts[1])
            if name.hasPrefix(" ") || name.hasPrefix("*") { name.removeFirst() }
            guard !lines.contains(where: { $0.name == name }) else { throw ManifestError("sql/\(fileName) lists \(name) twice") }
            lines.append((parts[0].lowercased(), name))
        }
        return lines
    }

    /// Every migration file in `sql/` (`NNN_name.sql`; not `schema.sql`), as `Migration`s made from the exact file bytes.
    static func files(in directory: URL = sqlDirectory) throws -> [Migration] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter(Migration.isMigrationFileName).sorted()
        return try names.map { name in
            let data = try Data(contentsOf: directory.appendingPathComponent(name))
            let sql = String(decoding: data, as: UTF8.self)
            // The checksum the database records is of the text's UTF-8: it equals sha256sum's only for valid UTF-8.
            guard Data(sql.utf8) == data else { throw ManifestError("sql/\(name) is not valid UTF-8") }
            return try Migration(name: name, sql: sql)
        }
    }

    @Test("sql/ holds migrations and the manifest is found")
    func found() throws {
        #expect(try Self.files().count >= 2, "no migrations in \(Self.sqlDirectory.path)")
        #expect(try !Self.manifest().isEmpty)
    }

    @Test("no migration was edited: each file matches its line in sql/checksums.sha256")
    func unchanged() throws {
        let manifest = try Self.manifest()
        for file in try Self.files() {
            guard let pinned = manifest[file.name] else { continue }  // reported by `complete`
            #expect(
                file.checksum == pinned,
                """
                sql/\(file.name) differs from its checksum in sql/\(Self.manifestName) (\(pinned), now \(file.checksum)). \
                Migrations are immutable once on main: databases have applied this text. Restore the file \
                as it is on main and add a new numbered file instead.
                """
            )
        }
    }

    @Test("every migration is listed in sql/checksums.sha256, and every listed file exists")
    func complete() throws {
        let manifest = try Self.manifest()
        let files = try Self.files()
        for file in files where manifest[file.name] == nil {
            Issue.record(
                """
                sql/\(file.name) is not in sql/\(Self.manifestName). Once the migration is final, add its line: \
                cd sql && sha256sum \(file.name) >> \(Self.manifestName)
                """
            )
        }
        let names = Set(files.map(\.name))
        for name in manifest.keys.sorted() where !names.contains(name) {
            Issue.record("sql/\(Self.manifestName) lists \(name), which is not in sql/: a migration on main is never deleted or renamed")
        }
    }

    @Test("the migrations embedded in the build are the ones in the manifest")
    func bundledMatchManifest() throws {
        let manifest = try Self.manifest()
        let bundled = try Migration.bundled()
        #expect(bundled.map(\.name).sorted() == manifest.keys.sorted(), "rebuild: the embedded migrations are not the files in sql/")
        for migration in bundled {
            #expect(migration.checksum == manifest[migration.name], "embedded \(migration.name) differs from sql/\(Self.manifestName)")
        }
    }
}

struct ManifestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
