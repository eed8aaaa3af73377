import Foundation
import SecurePushTestSupport

/// Runs the real binary as `securepush serve --role <role>` (the API by default) on a random port against
/// `db`, with the test JWT secret, quiet logs and `environment` merged in, and stops it when `body` returns
/// or throws.
func withServedAPI(
    _ db: TestDatabase, role: String = "api", environment: [String: String] = [:], _ body: (_ port: Int) async throws -> Void
) async throws {
    let port = Int.random(in: 20_000...40_000)
    let process = Process()
    process.executableURL = try securepushExecutable()
    process.arguments = ["serve", "--role", role]
    // A dispatcher serves no user route and needs no user-token key: it gets none.
    let userTokens = role == "dispatcher" ? [:] : ["SECUREPUSH_USER_JWT_SECRET": APIHarness.jwtSecret]
    process.environment = [
        "PATH": "/usr/bin:/bin", "DATABASE_URL": db.url.urlString, "SECUREPUSH_PORT": "\(port)", "SECUREPUSH_LOG_LEVEL": "error",
    ].merging(userTokens) { $1 }.merging(environment) { $1 }
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    defer {
        process.terminate()
        process.waitUntilExit()
    }
    try await body(port)
}
