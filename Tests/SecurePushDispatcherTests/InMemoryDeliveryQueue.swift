import Foundation
import NIOConcurrencyHelpers
import SecurePushCore

/// A `DeliveryQueue` in memory with the PostgreSQL queue's rules (leases, fencing by token, attempts
/// counted at claim, released claims not counted), so lane logic is tested without a database.
final class InMemoryDeliveryQueue: DeliveryQueue {
    struct Row {
        var delivery: ClaimedDelivery
        var pending = true
        var runAt = Date.distantPast
        var leaseToken: UUID?
        var outcome: DeliveryOutcome?
        /// How many times the claim was released unsent, and the last release's delay.
        var releases = 0
        var lastReleaseDelay: Duration?
    }

    private let rows = NIOLockedValueBox<[UUID: Row]>([:])
    private let order = NIOLockedValueBox<[UUID]>([])
    private let rejectedRows = NIOLockedValueBox<[RejectedDelivery]>([])
    private let claims = NIOLockedValueBox<[[Platform]]>([])

    /// Adds a pending delivery of `platform`; returns its id.
    @discardableResult
    func add(
        platform: Platform = .simulated, token: String? = nil, expiresIn: TimeInterval = 3600, deviceActive: Bool = true, user: String? = nil
    ) -> UUID {
        let id = UUID()
        var row = Self.pendingRow(id, platform: platform, token: token, expiresIn: expiresIn, deviceActive: deviceActive)
        row.delivery.user = user
        rows.withLockedValue { $0[id] = row }
        order.withLockedValue { $0.append(id) }
        return id
    }

    /// Adds `count` pending deliveries of `platform` at once, as one committed statement would: a claim sees
    /// all of them or none. Returns their ids in claim order.
    func add(count: Int, platform: Platform = .simulated) -> [UUID] {
        let ids = (0..<count).map { _ in UUID() }
        rows.withLockedValue { rows in
            for id in ids { rows[id] = Self.pendingRow(id, platform: platform) }
        }
        // Claims find rows through `order`: appending the ids together makes them visible together.
        order.withLockedValue { $0.append(contentsOf: ids) }
        return ids
    }

    private static func pendingRow(
        _ id: UUID, platform: Platform, token: String? = nil, expiresIn: TimeInterval = 3600, deviceActive: Bool = true
    ) -> Row {
        let target = PushTarget(deviceID: UUID(), platform: platform, token: token ?? "token-\(id)")
        let push = Push(notificationID: NotificationID(UUID()), target: target, expiresAt: Date().addingTimeInterval(expiresIn), attempt: 0)
        return Row(delivery: ClaimedDelivery(id: id, push: push, deviceActive: deviceActive))
    }

    /// Adds a row the next claim returns as rejected (as an unknown platform in the database would be).
    func addRejected(reason: String) -> UUID {
        let id = UUID()
        rejectedRows.withLockedValue { $0.append(RejectedDelivery(id: id, reason: reason)) }
        return id
    }

    /// The row of `id`.
    func row(_ id: UUID) -> Row? { rows.withLockedValue { $0[id] } }

    /// Finished (non-retry) outcomes so far.
    var finished: [UUID: DeliveryOutcome] {
        rows.withLockedValue { rows in
            rows.compactMapValues { row in row.outcome.flatMap { $0.kind == .retry ? nil : $0 } }
        }
    }

    /// The platforms of every claim so far, in order.
    var claimedPlatforms: [[Platform]] { claims.withLockedValue { $0 } }

    /// Rows currently claimed.
    var claimedCount: Int { rows.withLockedValue { $0.values.filter { !$0.pending && $0.outcome == nil }.count } }

    func claim(limit: Int, platforms: [Platform], lease: Duration, worker: UUID) async throws -> ClaimedBatch {
        let token = UUID()
        let now = Date()
        claims.withLockedValue { $0.append(platforms) }
        let ids = order.withLockedValue { $0 }
        let deliveries = rows.withLockedValue { rows -> [ClaimedDelivery] in
            var claimed: [ClaimedDelivery] = []
            for id in ids where claimed.count < limit {
                guard var row = rows[id], row.pending, row.runAt <= now, platforms.contains(row.delivery.push.target.platform) else { continue }
                row.pending = false
                row.leaseToken = token
                row.delivery.push.attempt += 1
                rows[id] = row
                claimed.append(row.delivery)
            }
            return claimed
        }
        let rejected = rejectedRows.withLockedValue { rejected in
            defer { rejected.removeAll() }
            return rejected
        }
        for item in rejected {
            rows.withLockedValue { $0[item.id] = Row(delivery: Self.placeholder(item.id), pending: false, leaseToken: token) }
        }
        return ClaimedBatch(leaseToken: token, deliveries: deliveries, rejected: rejected)
    }

    func complete(_ completions: [DeliveryCompletion], leaseToken: UUID) async throws -> Int {
        rows.withLockedValue { rows in
            var applied = 0
            for completion in completions {
                guard var row = rows[completion.deliveryID], row.leaseToken == leaseToken, !row.pending else { continue }
                row.outcome = completion.outcome
                row.leaseToken = nil
                if case .retry(let delay, _) = completion.outcome {
                    row.pending = true
                    row.runAt = Date().addingTimeInterval(delay.secondsDouble)
                }
                rows[completion.deliveryID] = row
                applied += 1
            }
            return applied
        }
    }

    func release(_ deliveryIDs: [UUID], leaseToken: UUID, delay: Duration) async throws -> Int {
        let now = Date()
        return rows.withLockedValue { rows in
            var released = 0
            for id in deliveryIDs {
                guard var row = rows[id], row.leaseToken == leaseToken, !row.pending else { continue }
                row.pending = true
                row.leaseToken = nil
                row.delivery.push.attempt -= 1
                if delay > .zero {
                    row.runAt = max(row.runAt, now.addingTimeInterval(delay.secondsDouble))
                }
                row.releases += 1
                row.lastReleaseDelay = delay
                rows[id] = row
                released += 1
            }
            return released
        }
    }

    private static func placeholder(_ id: UUID) -> ClaimedDelivery {
        let target = PushTarget(deviceID: UUID(), platform: .simulated, token: "")
        return ClaimedDelivery(id: id, push: Push(notificationID: NotificationID(UUID()), target: target, expiresAt: .distantFuture))
    }
}
