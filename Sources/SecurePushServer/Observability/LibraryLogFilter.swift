import Logging

/// A log handler that holds third-party modules to `debug` and above: at `trace`, libraries print wire
/// data (PostgresNIO logs every backend message, data rows with payloads and user ids included), which
/// must never reach the log. SecurePush's own modules log at any level (they log ids, never secrets or
/// payloads). The module is the event's `source`, which swift-log fills in from the call site.
struct LibraryLogFilter: LogHandler {
    var inner: any LogHandler

    /// Whether an event from `source` at `level` may be written.
    static func allows(_ level: Logger.Level, source: String) -> Bool {
        level > .trace || source.hasPrefix("SecurePush") || source.hasPrefix("securepush")
    }

    func log(event: LogEvent) {
        guard Self.allows(event.level, source: event.source) else { return }
        inner.log(event: event)
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }
}
