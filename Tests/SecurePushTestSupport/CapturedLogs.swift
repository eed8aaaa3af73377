import Logging
import NIOConcurrencyHelpers

/// Keeps every log line (message and metadata) a logger writes, so tests can prove what never appears.
public final class CapturedLogs: Sendable {
    private let lines = NIOLockedValueBox<[String]>([])

    /// Creates an empty capture.
    public init() {}

    /// A logger at `trace` level writing into this capture.
    public func logger(label: String) -> Logger {
        var logger = Logger(label: label) { _ in CapturingHandler(sink: self) }
        logger.logLevel = .trace
        return logger
    }

    /// Everything logged so far, one string per line.
    public var all: [String] { lines.withLockedValue { $0 } }

    fileprivate func append(_ line: String) {
        lines.withLockedValue { $0.append(line) }
    }
}

private struct CapturingHandler: LogHandler {
    let sink: CapturedLogs
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        sink.append("\(event.level) \(event.message) \(merged)")
    }
}
