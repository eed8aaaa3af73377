import Foundation
import NIOConcurrencyHelpers

/// Bounds each installation's sends in flight in this relay process, so one installation's broadcast
/// waits for its own slots and never for another's: installation B's single pushes go out beside A's
/// 100,000. Waiters are served in arrival order.
final class InstallationLimiter: Sendable {
    private struct Lane {
        var inFlight = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    /// One installation's sends in flight at most.
    let perInstallation: Int
    private let lanes = NIOLockedValueBox<[UUID: Lane]>([:])

    init(perInstallation: Int) {
        self.perInstallation = max(1, perInstallation)
    }

    /// Waits for a slot of `installation`'s.
    func acquire(_ installation: UUID) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = lanes.withLockedValue { lanes -> Bool in
                var lane = lanes[installation] ?? Lane()
                defer { lanes[installation] = lane }
                if lane.inFlight < perInstallation {
                    lane.inFlight += 1
                    return true
                }
                lane.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Frees a slot of `installation`'s (handing it to its first waiter).
    func release(_ installation: UUID) {
        let next = lanes.withLockedValue { lanes -> CheckedContinuation<Void, Never>? in
            guard var lane = lanes[installation] else { return nil }
            if lane.waiters.isEmpty {
                lane.inFlight -= 1
                lanes[installation] = lane.inFlight == 0 ? nil : lane
                return nil
            }
            let waiter = lane.waiters.removeFirst()
            lanes[installation] = lane
            return waiter
        }
        next?.resume()
    }
}
