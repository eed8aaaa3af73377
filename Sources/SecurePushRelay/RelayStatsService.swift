import Logging
import Metrics
import NIOConcurrencyHelpers
import SecurePushCore
import ServiceLifecycle

/// Exports pushes per installation in the last hour as `securepush_relay_installation_pushes{installation}`,
/// bounded whatever the number of installations: the `top` installations with the most pushes (by name),
/// and `_total` for all of them; a name that leaves the top has its series removed. Refreshed every
/// `interval` from the relay's database (`/status` shows the same top ten).
public struct RelayStatsService: Service {
    let store: RelayStore
    let interval: Duration
    let top: Int
    let logger: Logger

    /// Creates the service.
    public init(store: RelayStore, interval: Duration = .seconds(30), top: Int = 10, logger: Logger) {
        self.store = store
        self.interval = interval
        self.top = top
        self.logger = logger
    }

    /// The series label of the total.
    public static let total = "_total"

    public func run() async throws {
        let (store, top, logger) = (self.store, self.top, self.logger)
        let gauges = NIOLockedValueBox<[String: Gauge]>([:])
        try await runPeriodically(every: interval, logger: logger, failure: "relay statistics failed") { _ in
            let installations = try await withDeadline(.seconds(10)) { try await store.installations() }
            var values = Dictionary(
                RelayStore.busiest(installations, count: top).map { ($0.name, $0.pushesLastHour) }, uniquingKeysWith: { first, _ in first })
            values[Self.total] = installations.reduce(0) { $0 + $1.pushesLastHour }
            let gone = gauges.withLockedValue { gauges -> [Gauge] in
                for (name, value) in values {
                    let gauge = gauges[name] ?? Gauge(label: "securepush_relay_installation_pushes", dimensions: [("installation", name)])
                    gauge.record(value)
                    gauges[name] = gauge
                }
                let leaving = gauges.keys.filter { values[$0] == nil }
                return leaving.compactMap { gauges.removeValue(forKey: $0) }
            }
            for gauge in gone { gauge.destroy() }
        }
    }
}
