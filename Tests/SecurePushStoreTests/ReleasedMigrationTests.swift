import Foundation
import SecurePushStore
import Testing

/// `sql/released` records every migration that has landed on main, with the checksum of the bytes databases
/// applied. It is append-only, and it is checked on its own, so editing a released migration together with its line
/// in `sql/checksums.sha256` still fails here.
@Suite("Released migrations")
struct ReleasedMigrationTests {
    static let releasedName = "released"

    @Test("a released migration's bytes are the ones released, whatever sql/checksums.sha256 says")
    func releasedBytesUnchanged() throws {
        let files = Dictionary(uniqueKeysWithValues: try MigrationManifestTests.files().map { ($0.name, $0) })
        let released = try MigrationManifestTests.checksumLines(of: Self.releasedName)
        #expect(!released.isEmpty, "sql/released lists no migration")
        for line in released {
            guard let file = files[line.name] else {
                Issue.record("sql/released lists \(line.name), which is not in sql/: a released migration is never deleted or renamed")
                continue
            }
            #expect(
                file.checksum == line.checksum,
                """
                sql/\(line.name) was released with checksum \(line.checksum) and is now \(file.checksum). Databases have \
                applied the released text: restore it (git show <release>:sql/\(line.name)) and put the change in a new \
                numbered file.
                """
            )
        }
    }

    @Test("released migrations are a prefix of the migrations, in version order")
    func releasedArePrefix() throws {
        let names = try MigrationManifestTests.files().map(\.name)
        let released = try MigrationManifestTests.checksumLines(of: Self.releasedName).map(\.name)
        #expect(Array(names.prefix(released.count)) == released, "sql/released must list the oldest migrations in order, with no gap")
    }

    /// Every version of `sql/released` in the repository's history: its lines must still be the current file's first
    /// lines. This is what stops a released line from being rewritten along with its file.
    @Test("sql/released only ever grew: every line it had in any commit is still there, unchanged")
    func releasedIsAppendOnly() throws {
        let current = try MigrationManifestTests.checksumLines(of: Self.releasedName)
        let commits = try Self.git("log", "--format=%H", "--", "sql/\(Self.releasedName)")
            .split(separator: "\n").map(String.init)
        let uncommitted = try !Self.git("status", "--porcelain", "--", "sql/\(Self.releasedName)").isEmpty
        #expect(!commits.isEmpty || uncommitted, "git knows no version of sql/released")
        for commit in commits {
            let text = try Self.git("show", "\(commit):sql/\(Self.releasedName)")
            let earlier = try MigrationManifestTests.checksumLines(of: Self.releasedName, text: text)
            let kept = current.prefix(earlier.count)
            #expect(
                kept.map(\.name) == earlier.map(\.name) && kept.map(\.checksum) == earlier.map(\.checksum),
                "sql/released at \(commit.prefix(12)) is not a prefix of today's: a released line was edited or removed"
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
