import Foundation
import SecurePushFakes
import SecurePushTestSupport
import Testing

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
    guard FileManager.default.createFile(atPath: log.path, contents: nil) else { throw TestFailure("cannot create \(log.path)") }
    process.standardError = try FileHandle(forWritingTo: log)
    try process.run()
    defer {
        process.terminate()
        // A server that does not stop is a failure of its own, never a test run that hangs: killed after 30 s.
        let deadline = ContinuousClock.now + .seconds(30)
        while process.isRunning, ContinuousClock.now < deadline { usleep(20_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            Issue.record("the server did not stop within 30 s of SIGTERM (killed); its log: \(log.path)")
        } else if logFile == nil {
            try? FileManager.default.removeItem(at: log)
        }
        process.waitUntilExit()
    }
    do {
        try await body(port)
    } catch {
        guard !process.isRunning else { throw error }
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        throw TestFailure("\(error); the server had exited (status \(process.terminationStatus)): \(output.suffix(1500))")
    }
}

/// What a `securepush` command did: its exit status, everything it printed (standard output and error
/// together) and how long it ran.
struct CommandRun {
    var status: Int32
    var output: String
    var elapsed: Duration
}

/// Runs `securepush <arguments>` to its end with `environment`, bounded by `timeout` (then killed, and the
/// test fails).
func runSecurepush(_ arguments: [String], environment: [String: String], timeout: Duration = .seconds(60)) async throws -> CommandRun {
    let process = Process()
    process.executableURL = try securepushExecutable()
    process.arguments = arguments
    process.environment = ["PATH": "/usr/bin:/bin"].merging(environment) { $1 }
    let output = FileManager.default.temporaryDirectory.appendingPathComponent("securepush-run-\(UUID()).log")
    guard FileManager.default.createFile(atPath: output.path, contents: nil) else { throw TestFailure("cannot create \(output.path)") }
    defer { try? FileManager.default.removeItem(at: output) }
    let handle = try FileHandle(forWritingTo: output)
    process.standardOutput = handle
    process.standardError = handle
    let clock = ContinuousClock()
    let start = clock.now
    try process.run()
    do {
        try await eventually("securepush \(arguments.joined(separator: " ")) exits", timeout: timeout) { !process.isRunning }
    } catch {
        process.terminate()
        process.waitUntilExit()
        throw error
    }
    process.waitUntilExit()
    try handle.close()
    return CommandRun(status: process.terminationStatus, output: try String(contentsOf: output, encoding: .utf8), elapsed: clock.now - start)
}
