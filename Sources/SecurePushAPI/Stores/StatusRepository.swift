import SecurePushReports
import SecurePushStore

/// The status report `/status` shows: the seam between the operations routes and `StatusStore` (SQL).
public protocol StatusRepository: Sendable {
    /// The whole report, with the migrations still pending.
    func report(pendingMigrations: [String]) async throws -> StatusReport
}

extension StatusStore: StatusRepository {}
