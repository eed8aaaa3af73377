import SecurePushReports
import SecurePushStore

/// The status report `/status` shows and the fetch gauges of `/metrics`: the seam between the operations routes
/// (and `FetchStatsService`) and `StatusStore` (SQL).
public protocol StatusRepository: Sendable {
    /// The whole report, with the migrations still pending.
    func report(pendingMigrations: [String]) async throws -> StatusReport
    /// Per platform, pushes accepted in the last `window` and how many their devices fetched (`FetchStatsService`).
    func fetchStats(window: Duration) async throws -> [StatusReport.PlatformFetch]
}

extension StatusStore: StatusRepository {}
