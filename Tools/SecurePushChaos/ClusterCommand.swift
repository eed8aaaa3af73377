import Foundation
import NIOConcurrencyHelpers

/// Runs the HA cluster library (`ops/failover.d/cluster.sh SUBCOMMAND DIR ARGS...`) for the failover rows.
/// Its standard output is what it prints (a leader line, `SECONDS PORT`); its standard error (progress) is
/// appended to `cluster.log` in the row's folder. Both go to files, never to a pipe of ours: nothing it
/// starts can hold the table's output open.
struct ClusterCommand: Sendable {
    let script: String
    let directory: String
    let workDirectory: String

    init(options: ChaosOptions) throws {
        guard let script = options.clusterScript, let directory = options.clusterDirectory else {
            throw ChaosError("the failover rows need --cluster-script and --cluster-dir")
        }
        self.script = script
        self.directory = directory
        self.workDirectory = options.workDirectory
    }

    /// The leader's `NAME PG_PORT POSTMASTER_PID`.
    func leader() async throws -> (name: String, port: Int, pid: Int) {
        let words = try await run("leader", timeout: .seconds(15)).split(whereSeparator: \.isWhitespace)
        guard words.count >= 3, let port = Int(words[1]) else { throw ChaosError("cluster.sh leader printed '\(words.joined(separator: " "))'") }
        return (String(words[0]), port, Int(words[2]) ?? 0)
    }

    /// Runs `subcommand DIR arguments...`; returns its standard output, throws when it fails or outlives `timeout`
    /// (then it is sent SIGTERM; a frozen or isolated node is let go by `cluster.sh stop`).
    @discardableResult
    func run(_ subcommand: String, _ arguments: [String] = [], timeout: Duration) async throws -> String {
        let output = "\(workDirectory)/cluster-\(subcommand)-\(UUID().uuidString.prefix(8)).out"
        let logPath = "\(workDirectory)/cluster.log"
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        if !FileManager.default.fileExists(atPath: logPath) { _ = FileManager.default.createFile(atPath: logPath, contents: nil) }
        guard let out = FileHandle(forWritingAtPath: output), let err = FileHandle(forWritingAtPath: logPath) else {
            throw ChaosError("cannot write in \(workDirectory)")
        }
        err.seekToEndOfFile()
        err.write(Data("\(ISO8601DateFormatter().string(from: Date())) cluster.sh \(subcommand) \(arguments.joined(separator: " "))\n".utf8))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script, subcommand, directory] + arguments
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning {
            process.terminate()
            try? out.close()
            try? err.close()
            throw ChaosError("cluster.sh \(subcommand) did not finish within \(timeout)")
        }
        try? out.close()
        try? err.close()
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: output)
        guard process.terminationStatus == 0 else {
            throw ChaosError("cluster.sh \(subcommand) exited with \(process.terminationStatus) (see \(logPath))")
        }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Follows processes' log files while a fault runs and notes when each line appeared (to the tenth of a
/// second, whatever the log's own timestamps say).
final class LogWatcher: Sendable {
    struct Line: Sendable {
        var process: String
        var seenAt: Date
        var text: String
    }

    private let processes: [(name: String, path: String)]
    private let lines = NIOLockedValueBox<[Line]>([])

    init(_ processes: [ServerProcess]) {
        self.processes = processes.map { ($0.name, $0.logPath) }
    }

    /// Every line seen so far.
    var seen: [Line] { lines.withLockedValue { $0 } }

    /// Reads new lines every 100 ms until cancelled (lines already in the files are skipped).
    func run() async {
        var offsets = processes.map { (try? FileManager.default.attributesOfItem(atPath: $0.path)[.size] as? UInt64) ?? 0 }
        var partial = Array(repeating: "", count: processes.count)
        while !Task.isCancelled {
            for (index, process) in processes.enumerated() {
                guard let handle = FileHandle(forReadingAtPath: process.path) else { continue }
                handle.seek(toFileOffset: offsets[index])
                let data = handle.readDataToEndOfFile()
                try? handle.close()
                guard !data.isEmpty else { continue }
                offsets[index] += UInt64(data.count)
                let text = partial[index] + String(decoding: data, as: UTF8.self)
                var parts = text.split(separator: "\n", omittingEmptySubsequences: false)
                partial[index] = String(parts.removeLast())
                let now = Date()
                lines.withLockedValue { lines in
                    for part in parts where !part.isEmpty { lines.append(Line(process: process.name, seenAt: now, text: String(part))) }
                }
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }
}
