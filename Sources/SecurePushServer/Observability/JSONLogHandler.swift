import Foundation
import Logging
import NIOConcurrencyHelpers
import SecurePushCore

/// `SECUREPUSH_LOG_FORMAT=json`: one JSON object a line on standard error, for log shippers:
/// `{"level", "label", "message", "metadata", "source", "time"}` (keys sorted; metadata values as strings,
/// lists and objects). It writes exactly what the text handler writes, so the same hygiene holds (no payload,
/// token, secret or database password: they are never logged, in any format) and `LibraryLogFilter` wraps it
/// alike.
struct JSONLogHandler: LogHandler {
    var label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    let write: @Sendable (String) -> Void

    /// A handler writing to standard error, one `write` per line so that lines from concurrent tasks never mix.
    static func standardError(label: String) -> JSONLogHandler {
        JSONLogHandler(label: label) { line in
            lock.withLock { FileHandle.standardError.write(Data(line.utf8)) }
        }
    }

    private static let lock = NIOLock()

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let object: [String: Any] = [
            "time": APITimestamp.string(Date()), "level": event.level.rawValue, "label": label, "source": event.source,
            "message": event.message.description, "metadata": merged.mapValues(Self.json),
        ]
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        write(String(decoding: data, as: UTF8.self) + "\n")
    }

    /// A metadata value as JSON: strings stay strings; lists and dictionaries keep their shape.
    static func json(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let string): string
        case .stringConvertible(let convertible): convertible.description
        case .array(let array): array.map(json)
        case .dictionary(let dictionary): dictionary.mapValues(json)
        }
    }
}
