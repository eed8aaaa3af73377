import Foundation
import SecurePushFakes
import SecurePushTestSupport

/// A TCP port on 127.0.0.1 that nothing is bound to now, below the ephemeral range (`LoopbackPort.free()`).
func freeTCPPort() -> Int {
    LoopbackPort.free() ?? Int.random(in: 10_000...32_000)
}

/// Runs the real binary as `securepush serve --role <role>` (the API by default) on a random port against
/// `db`, with the test JWT secret, quiet logs and `environment` merged in, and stops it when `body` returns
/// or throws. With `logFile`, standard error goes there (and the caller sets the log level).
func withServedAPI(
    _ db: TestDatabase, role: String = "api", environment: [String: String] = [:], logFile: URL? = nil,
    _ body: (_ port: Int) async throws -> Void
) async throws {
    let port = freeTCPPort()
    let process = Process()
    process.executableURL = try securepushExecutable()
    process.arguments = ["serve", "--role", role]
    // A dispatcher serves no user route and needs no user-token key: it gets none.
    let userTokens = role == "dispatcher" ? [:] : ["SECUREPUSH_USER_JWT_SECRET": APIHarness.jwtSecret]
    process.environment = [
        "PATH": "/usr/bin:/bin", "DATABASE_URL": db.url.urlString, "SECUREPUSH_PORT": "\(port)", "SECUREPUSH_LOG_LEVEL": "error",
    ].merging(userTokens) { $1 }.merging(environment) { $1 }
    process.standardOutput = FileHandle.nullDevice
    // Standard error goes to a file (the caller's, or a temporary one), so a server that exits early says why.
    let log = logFile ?? FileManager.default.temporaryDirectory.appendingPathComponent("securepush-served-\(UUID()).log")
    FileManager.default.createFile(atPath: log.path, contents: nil)
    process.standardError = try FileHandle(forWritingTo: log)
    try process.run()
    defer {
        process.terminate()
        process.waitUntilExit()
        if logFile == nil { try? FileManager.default.removeItem(at: log) }
    }
    do {
        try await body(port)
    } catch {
        guard !process.isRunning else { throw error }
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        throw TestFailure("\(error); the server had exited (status \(process.terminationStatus)): \(output.suffix(1500))")
    }
}

/// Runs `securepush <arguments>` to its end with `environment`; returns its exit status and everything it
/// printed (standard output and error together).
func runSecurepush(_ arguments: [String], environment: [String: String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = try securepushExecutable()
    process.arguments = arguments
    process.environment = ["PATH": "/usr/bin:/bin"].merging(environment) { $1 }
    let output = FileManager.default.temporaryDirectory.appendingPathComponent("securepush-run-\(UUID()).log")
    FileManager.default.createFile(atPath: output.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: output) }
    let handle = try FileHandle(forWritingTo: output)
    process.standardOutput = handle
    process.standardError = handle
    try process.run()
    process.waitUntilExit()
    try handle.close()
    return (process.terminationStatus, try String(contentsOf: output, encoding: .utf8))
}
