import Foundation

#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif

/// One `securepush` child process, its output in a log file.
final class ServerProcess: @unchecked Sendable {
    /// A short name for logs and figures (`p1`, `p2`).
    let name: String
    /// The HTTP port when the process serves the API.
    let port: Int?
    /// The log file (standard output and error).
    let logPath: String
    private let process: Process

    /// The process id.
    var pid: Int32 { process.processIdentifier }
    /// Whether it is still running.
    var isRunning: Bool { process.isRunning }

    private init(name: String, port: Int?, logPath: String, process: Process) {
        self.name = name
        self.port = port
        self.logPath = logPath
        self.process = process
    }

    /// Starts `binary arguments` with exactly `environment` (plus PATH and HOME).
    static func start(name: String, binary: String, arguments: [String], environment: [String: String], port: Int?, logDirectory: String) throws
        -> ServerProcess
    {
        let logPath = "\(logDirectory)/\(name).log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        guard let log = FileHandle(forWritingAtPath: logPath) else { throw ChaosError("cannot write \(logPath)") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        var base: [String: String] = [:]
        // SECUREPUSH_REPLICATION_GATE: the failover matrix runs its servers with the gate on or off.
        for key in ["PATH", "HOME", "TMPDIR", "LANG", "SECUREPUSH_REPLICATION_GATE"] {
            if let value = ProcessInfo.processInfo.environment[key] { base[key] = value }
        }
        process.environment = base.merging(environment) { _, new in new }
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // For `ops/chaos` to clean up after a driver that was killed.
        if let pids = FileHandle(forUpdatingAtPath: "\(logDirectory)/pids") ?? Self.create("\(logDirectory)/pids") {
            pids.seekToEndOfFile()
            pids.write(Data("\(process.processIdentifier)\n".utf8))
            try? pids.close()
        }
        return ServerProcess(name: name, port: port, logPath: logPath, process: process)
    }

    private static func create(_ path: String) -> FileHandle? {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        return FileHandle(forUpdatingAtPath: path)
    }

    /// Runs `binary arguments` to completion; throws with its output when it fails.
    static func run(binary: String, arguments: [String], environment: [String: String], logDirectory: String, name: String) async throws {
        let child = try start(name: name, binary: binary, arguments: arguments, environment: environment, port: nil, logDirectory: logDirectory)
        let deadline = Date().addingTimeInterval(60)
        while child.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        guard !child.isRunning, child.process.terminationStatus == 0 else {
            let timedOut = child.isRunning
            child.kill()
            // The last lines first: what the table's cell can hold is the reason.
            let tail = child.log().split(separator: "\n").suffix(3).reversed().joined(separator: " ⟵ ")
            throw ChaosError(
                "\(URL(fileURLWithPath: binary).lastPathComponent) \(arguments.joined(separator: " ")) "
                    + (timedOut ? "did not finish in 60 s" : "exited with \(child.process.terminationStatus)") + ": \(tail.suffix(1500))")
        }
    }

    /// Sends a signal.
    func signal(_ number: Int32) {
        if process.isRunning {
            #if canImport(Glibc)
                _ = Glibc.kill(pid, number)
            #else
                _ = Darwin.kill(pid, number)
            #endif
        }
    }

    /// SIGCONT (in case it is stopped), SIGTERM, then waits up to `grace` before SIGKILL.
    func stop(grace: Duration = .seconds(20)) async {
        signal(SIGCONT)
        signal(SIGTERM)
        let deadline = ContinuousClock.now + grace
        while process.isRunning && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(50))
        }
        kill()
    }

    /// SIGKILL when still running, and waits for the exit.
    func kill() {
        guard process.isRunning else { return }
        signal(SIGKILL)
        process.waitUntilExit()
    }

    /// The log so far.
    func log() -> String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }
}
