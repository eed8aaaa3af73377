import Logging
import Metrics
import NIOConcurrencyHelpers
import Prometheus

/// Process-wide logging and metrics set-up (once).
public enum LoggingBootstrap {
    private static let done = NIOLockedValueBox(false)
    /// The Prometheus registry `/metrics` renders.
    public static let metricsRegistry = PrometheusCollectorRegistry()

    /// Logs to standard error at `level` (third-party modules at `debug` at most: `LibraryLogFilter`) and
    /// records metrics in `metricsRegistry`.
    public static func bootstrap(level: Logger.Level) {
        let first = done.withLockedValue { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return LibraryLogFilter(inner: handler)
        }
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: metricsRegistry))
    }
}
