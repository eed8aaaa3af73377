import Logging

/// A log handler that holds third-party modules to `debug` and above: at `trace`, libraries print wire
/// data (PostgresNIO logs every backend message, data rows with payloads and user ids included), which
/// must never reach the log. SecurePush's own modules log at any level (they log ids, never secrets or
/// payloads). The module is the event's `source`, which swift-log fills in from the call site.
///
/// The logger's metadata is kept here and handed to `inner` with each event written: swift-log's text handler
/// renders its metadata whenever it is set, and Hummingbird sets a request id on every request's logger, which
/// cost the read path about 1.3 % of the machine's CPU for lines that were never written (stop 67's profile).
struct LibraryLogFilter: LogHandler {
    var inner: any LogHandler
    var metadata: Logger.Metadata = [:]

    /// Whether an event from `source` at `level` may be written.
    static func allows(_ level: Logger.Level, source: String) -> Bool {
        level > .trace || source.hasPrefix("SecurePush") || source.hasPrefix("securepush")
    }

    func log(event: LogEvent) {
        guard Self.allows(event.level, source: event.source) else { return }
        guard !metadata.isEmpty else { return inner.log(event: event) }
        var event = event
        event.metadata = metadata.merging(event.metadata ?? [:]) { _, explicit in explicit }
        inner.log(event: event)
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
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
