import Foundation
import NIOConcurrencyHelpers

/// Named moments a row's disruption records for its checks (e.g. when SIGCONT was sent).
final class Marks: Sendable {
    private let moments = NIOLockedValueBox<[String: Date]>([:])

    /// Records `name` as now (or `date`).
    func set(_ name: String, _ date: Date = Date()) {
        moments.withLockedValue { $0[name] = date }
    }

    /// A recorded moment.
    func get(_ name: String) -> Date? {
        moments.withLockedValue { $0[name] }
    }
}
