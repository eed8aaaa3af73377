import Logging
import Metrics
import NIOConcurrencyHelpers
import Prometheus

/// Process-wide logging and metrics set-up (once).
public enum LoggingBootstrap {
    private static let done = NIOLockedValueBox(false)
    /// The Prometheus registry `/metrics` renders.
    public static let metricsRegistry = PrometheusCollectorRegistry()

    /// Logs to standard error at `level`, as text or one JSON object a line (`SECUREPUSH_LOG_FORMAT`), third-party
    /// modules at `debug` at most (`LibraryLogFilter`), and records metrics in `metricsRegistry`.
    public static func bootstrap(level: Logger.Level, format: LogFormat = .text) {
        let first = done.withLockedValue { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        LoggingSystem.bootstrap { label in
            switch format {
            case .text:
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return LibraryLogFilter(inner: handler)
            case .json:
                var handler = JSONLogHandler.standardError(label: label)
                handler.logLevel = level
                return LibraryLogFilter(inner: handler)
            }
        }
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: metricsRegistry))
    }
}

/// How log lines are written (`SECUREPUSH_LOG_FORMAT`).
public enum LogFormat: String, Sendable, CaseIterable {
    /// swift-log's text lines (the default).
    case text
    /// One JSON object a line (`JSONLogHandler`).
    case json
}
