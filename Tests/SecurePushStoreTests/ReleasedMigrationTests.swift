import Foundation
import SecurePushPostgres
import SecurePushStore
import Testing

/// `sql/released` (and `sql/relay/released`, the relay's schema) records every migration that has landed on main,
/// with the checksum of the bytes databases applied. It is append-only, and it is checked on its own, so editing a
/// released migration together with its line in `sql/checksums.sha256` still fails here.
@Suite("Released migrations")
struct ReleasedMigrationTests {
    static let releasedName = "released"
    /// The folders of migrations, relative to the repository: the server's schema and the relay's.
    static let folders = ["sql", "sql/relay"]

    static func directory(_ folder: String) -> URL {
        MigrationManifestTests.sqlDirectory.deletingLastPathComponent().appendingPathComponent(folder)
    }

    @Test("a released migration's bytes are the ones released, whatever sql/checksums.sha256 says", arguments: folders)
    func releasedBytesUnchanged(folder: String) throws {
        let directory = Self.directory(folder)
        let files = Dictionary(uniqueKeysWithValues: try MigrationManifestTests.files(in: directory).map { ($0.name, $0) })
        let released = try MigrationManifestTests.checksumLines(of: Self.releasedName, in: directory)
        #expect(!released.isEmpty, "\(folder)/released lists no migration")
        for line in released {
            guard let file = files[line.name] else {
                Issue.record("\(folder)/released lists \(line.name), which is not in \(folder)/: a released migration is never deleted or renamed")
                continue
            }
            #expect(
                file.checksum == line.checksum,
                """
                \(folder)/\(line.name) was released with checksum \(line.checksum) and is now \(file.checksum). Databases \
                have applied the released text: restore it (git show <release>:\(folder)/\(line.name)) and put the change \
                in a new numbered file.
                """
            )
        }
    }

    @Test("released migrations are a prefix of the migrations, in version order", arguments: folders)
    func releasedArePrefix(folder: String) throws {
        let names = try MigrationManifestTests.files(in: Self.directory(folder)).map(\.name)
        let released = try MigrationManifestTests.checksumLines(of: Self.releasedName, in: Self.directory(folder)).map(\.name)
        #expect(Array(names.prefix(released.count)) == released, "\(folder)/released must list the oldest migrations in order, with no gap")
    }

    /// Every version of `sql/released` in the repository's history: its lines must still be the current file's first
    /// lines. This is what stops a released line from being rewritten along with its file.
    @Test("released only ever grew: every line it had in any commit is still there, unchanged", arguments: folders)
    func releasedIsAppendOnly(folder: String) throws {
        let path = "\(folder)/\(Self.releasedName)"
        let current = try MigrationManifestTests.checksumLines(of: Self.releasedName, in: Self.directory(folder))
        let commits = try Self.git("log", "--format=%H", "--", path).split(separator: "\n").map(String.init)
        let uncommitted = try !Self.git("status", "--porcelain", "--", path).isEmpty
        #expect(!commits.isEmpty || uncommitted, "git knows no version of \(path)")
        for commit in commits {
            let text = try Self.git("show", "\(commit):\(path)")
            let earlier = try MigrationManifestTests.checksumLines(of: Self.releasedName, text: text)
            let kept = current.prefix(earlier.count)
            #expect(
                kept.map(\.name) == earlier.map(\.name) && kept.map(\.checksum) == earlier.map(\.checksum),
                "\(path) at \(commit.prefix(12)) is not a prefix of today's: a released line was edited or removed"
            )
        }
    }

    /// Runs git in the repository and returns its standard output; a failing git fails the test.
    static func git(_ arguments: String...) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "-C", MigrationManifestTests.sqlDirectory.deletingLastPathComponent().path] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ManifestError(
                "git \(arguments.joined(separator: " ")) exited \(process.terminationStatus): the checks need the repository's history")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
