import Foundation
import SecurePushCore
import SecurePushTestSupport
import Testing

/// The version has one home (`SecurePushVersion.current`): `securepush --version` prints it and CHANGELOG.md's
/// newest release is it.
@Suite("Version")
struct VersionTests {
    @Test("securepush --version, SecurePushVersion.current and CHANGELOG.md's newest release agree")
    func versionsAgree() async throws {
        let run = try await runSecurepush(["--version"], environment: [:])
        #expect(run.status == 0)
        #expect(run.output.trimmingCharacters(in: .whitespacesAndNewlines) == SecurePushVersion.current)
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let changelog = try String(contentsOf: root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let newest = changelog.split(separator: "\n").first { $0.hasPrefix("## ") }
        #expect(newest?.hasPrefix("## \(SecurePushVersion.current) ") == true, "CHANGELOG.md's newest release: \(newest ?? "none")")
    }
}
