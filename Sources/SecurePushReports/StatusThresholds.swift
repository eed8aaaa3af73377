import SecurePushCore

/// When `/status` says "degraded" rather than "ok" (`StatusReport.Health`): each condition that a green page
/// hid before (an 84 s queue lag, a platform no dispatcher pushes, a 20 % fetch ratio) is one reason.
/// Settings: `SECUREPUSH_HEALTH_MAX_LAG`, `SECUREPUSH_HEALTH_MAX_FEED_LAG`, `SECUREPUSH_HEALTH_MIN_FETCH_RATIO`
/// (docs/operations.md § Status).
public struct StatusThresholds: Sendable, Equatable {
    /// The oldest due delivery may wait this long (default 60 s).
    public var maxQueueLag: Duration = .seconds(60)
    /// The outcome feed and the webhook may hold an event back this long (default 10 s).
    public var maxFeedLag: Duration = .seconds(10)
    /// A platform's fetch ratio over the last hour may not fall below this (default 0.5)...
    public var minFetchRatio: Double = 0.5
    /// ...once it has at least this many accepted pushes in the hour (fewer say little).
    public var minFetchSample: Int64 = 20

    /// The defaults.
    public init() {}

    /// What is wrong in `report`, if anything.
    public func health(of report: StatusReport) -> StatusReport.Health {
        var reasons: [String] = []
        if !report.database.reachable { reasons.append("the database does not answer") }
        if !report.database.migrationsPending.isEmpty {
            reasons.append("migrations pending: \(report.database.migrationsPending.joined(separator: ", ")) (run securepush migrate)")
        }
        let alive = report.dispatchers.filter { $0.state == .alive }
        if alive.isEmpty { reasons.append("no live dispatcher") }
        let lagLimit = Double(maxQueueLag.components.seconds)
        if let lag = report.queue.oldestPendingAgeSeconds, lag > lagLimit {
            reasons.append("the oldest due delivery has waited \(Int(lag)) s (more than \(Int(lagLimit)) s)")
        }
        // A dispatcher that did not say what it pushes (an older build) could push anything: no verdict then.
        if !alive.isEmpty, !alive.contains(where: { $0.platforms.isEmpty }) {
            let pushed = Set(alive.flatMap(\.platforms))
            for queue in report.queue.byPlatform where queue.pending > 0 && !pushed.contains(queue.platform) {
                reasons.append("\(queue.pending) \(queue.platform) deliveries wait and no live dispatcher pushes \(queue.platform)")
            }
        }
        let feedLimit = Double(maxFeedLag.components.seconds)
        if let held = report.feed.heldSeconds, held > feedLimit {
            let holder = report.feed.heldBy.map { " by the open transaction of session \($0.pid) (role \($0.role))" } ?? ""
            reasons.append("the outcome feed has held its events back for \(Int(held)) s\(holder) (more than \(Int(feedLimit)) s)")
        }
        if let lag = report.feed.webhook?.lagSeconds, lag > feedLimit {
            reasons.append("the outcome webhook is \(Int(lag)) s behind the feed (more than \(Int(feedLimit)) s)")
        }
        for circuit in report.openCircuits {
            reasons.append("the \(circuit.platform) circuit breaker is \(circuit.state.rawValue)\(circuit.host.map { " for \($0)" } ?? "")")
        }
        for fetch in report.fetchLastHour where fetch.accepted >= minFetchSample && fetch.fetchRatio < minFetchRatio {
            reasons.append(
                "\(fetch.platform): \(Int((fetch.fetchRatio * 100).rounded())) % of the last hour's pushes were fetched (below \(Int((minFetchRatio * 100).rounded())) %)"
            )
        }
        return StatusReport.Health(status: reasons.isEmpty ? "ok" : "degraded", reasons: reasons)
    }
}
