import Logging
import NIOConcurrencyHelpers
import Prometheus
import SecurePushCore
import SecurePushReports
import ServiceLifecycle

/// Refreshes the fetch-lifecycle gauges of `/metrics` from the database every `interval` (the API role
/// runs it), so a scrape never waits for, or fails with, the database:
///
/// - `securepush_pushes_accepted_last_hour{platform}`: pushes the platform accepted in the last hour;
/// - `securepush_pushes_fetched_last_hour{platform}`: of those, how many their device fetched;
/// - `securepush_fetch_ratio{platform}`: fetched ÷ accepted;
/// - `securepush_push_to_fetch_seconds{platform,quantile="0.5"|"0.99"}`: acceptance to first fetch.
///
/// A platform that had pushes earlier but none in the last hour keeps `accepted` and `fetched` at 0; its
/// ratio and latency series are removed (no data, rather than a misleading 0).
public final class FetchStatsService: Service {
    let status: any StatusRepository
    let registry: PrometheusCollectorRegistry
    let interval: Duration
    let timeout: Duration
    let logger: Logger
    private let gauges = NIOLockedValueBox<[String: PlatformGauges]>([:])

    /// Creates the service; each refresh is bounded by `timeout`.
    public init(status: any StatusRepository, registry: PrometheusCollectorRegistry, interval: Duration, timeout: Duration, logger: Logger) {
        self.status = status
        self.registry = registry
        self.interval = interval
        self.timeout = timeout
        self.logger = logger
    }

    public func run() async throws {
        try await runPeriodically(every: interval, logger: logger, failure: "fetch statistics refresh failed") { _ in
            try await self.refresh()
        }
    }

    /// Reads the last hour's statistics once and sets the gauges.
    public func refresh() async throws {
        let status = self.status
        let rows = try await withDeadline(timeout) { try await status.fetchStats(window: .seconds(3600)) }
        let registry = self.registry
        gauges.withLockedValue { gauges in
            var seen: Set<String> = []
            for row in rows {
                seen.insert(row.platform)
                let platform = gauges[row.platform] ?? PlatformGauges(platform: row.platform, registry: registry)
                platform.accepted.set(row.accepted)
                platform.fetched.set(row.fetched)
                let (ratio, p50, p99) = platform.ratioAndLatency(registry: registry)
                ratio.set(row.fetchRatio)
                if let value = row.pushToFetchP50Seconds { p50.set(value) } else { registry.unregisterGauge(p50) }
                if let value = row.pushToFetchP99Seconds { p99.set(value) } else { registry.unregisterGauge(p99) }
                gauges[row.platform] = platform
            }
            for (name, platform) in gauges where !seen.contains(name) {
                platform.accepted.set(Int64(0))
                platform.fetched.set(Int64(0))
                platform.removeRatioAndLatency(registry: registry)
            }
        }
    }

    /// One platform's gauges.
    struct PlatformGauges {
        let platform: String
        let accepted: Gauge
        let fetched: Gauge

        init(platform: String, registry: PrometheusCollectorRegistry) {
            self.platform = platform
            self.accepted = registry.makeGauge(
                descriptor: MetricNameDescriptor(
                    metricName: "securepush_pushes_accepted_last_hour", unitName: "", helpText: "Pushes the platform accepted in the last hour."),
                labels: [("platform", platform)])
            self.fetched = registry.makeGauge(
                descriptor: MetricNameDescriptor(
                    metricName: "securepush_pushes_fetched_last_hour", unitName: "",
                    helpText: "Pushes accepted in the last hour whose device has fetched the notification."), labels: [("platform", platform)])
        }

        /// The ratio and latency gauges (made again after a removal: the registry returns the live one).
        func ratioAndLatency(registry: PrometheusCollectorRegistry) -> (Gauge, Gauge, Gauge) {
            (
                registry.makeGauge(
                    descriptor: MetricNameDescriptor(
                        metricName: "securepush_fetch_ratio", unitName: "",
                        helpText: "Pushes accepted in the last hour that their device fetched, divided by the pushes accepted."),
                    labels: [("platform", platform)]),
                registry.makeGauge(
                    descriptor: MetricNameDescriptor(
                        metricName: "securepush_push_to_fetch_seconds", unitName: "",
                        helpText: "Time from the platform's acceptance of a push to the device's first fetch, last hour."),
                    labels: [("platform", platform), ("quantile", "0.5")]),
                registry.makeGauge(
                    descriptor: MetricNameDescriptor(
                        metricName: "securepush_push_to_fetch_seconds", unitName: "",
                        helpText: "Time from the platform's acceptance of a push to the device's first fetch, last hour."),
                    labels: [("platform", platform), ("quantile", "0.99")])
            )
        }

        func removeRatioAndLatency(registry: PrometheusCollectorRegistry) {
            let (ratio, p50, p99) = ratioAndLatency(registry: registry)
            registry.unregisterGauge(ratio)
            registry.unregisterGauge(p50)
            registry.unregisterGauge(p99)
        }
    }
}
