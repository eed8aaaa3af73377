import Foundation
import Synchronization

/// Named moments a row's disruption records for its checks (e.g. when SIGCONT was sent).
final class Marks: Sendable {
    private let moments = Mutex<[String: Date]>([:])

    /// Records `name` as now (or `date`).
    func set(_ name: String, _ date: Date = Date()) {
        moments.withLock { $0[name] = date }
    }

    /// A recorded moment.
    func get(_ name: String) -> Date? {
        moments.withLock { $0[name] }
    }
}
