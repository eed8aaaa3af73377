import Foundation

/// The loss checker: the producer's ledger against what the fakes accepted. Every committed notification
/// must reach every device its user had (one push per device); nothing may arrive that was not committed
/// or at a device of another user; pushes accepted more than once are counted (allowed: at least once).
struct LossReport: Sendable {
    /// A (notification, device) pair.
    struct Pair: Hashable, Sendable {
        var notification: UUID
        var platform: ChaosPlatform
        var deviceKey: String
    }

    /// Committed notifications.
    var committed = 0
    /// Pushes the ledger calls for (committed × the user's devices).
    var expected = 0
    /// Expected pushes accepted at least once.
    var delivered = 0
    /// Expected pushes never accepted.
    var lost = 0
    /// Accepted pushes the ledger does not call for (a notification never committed, another user's device, an unreadable id).
    var unexpected = 0
    /// Accepted pushes beyond the first of each pair.
    var duplicates = 0
    /// Accepted read-sync clears (not pushes of a notification: left out of the comparison).
    var clears = 0
    /// A few lost pairs, for the log.
    var lostExamples: [Pair] = []

    /// The expected pairs of `ledger` (notification → user) for `devices`.
    static func expectedPairs(ledger: [UUID: String], devices: [ChaosDevice]) -> Set<Pair> {
        let byUser = Dictionary(grouping: devices, by: \.user)
        var pairs = Set<Pair>()
        for (notification, user) in ledger {
            for device in byUser[user] ?? [] {
                pairs.insert(Pair(notification: notification, platform: device.platform, deviceKey: device.key))
            }
        }
        return pairs
    }

    /// Counts accepted pushes per pair; an accepted push without a readable id counts under a nil-id key.
    static func acceptedCounts(_ attempts: [PushAttempt]) -> (counts: [Pair: Int], unreadable: Int) {
        var counts: [Pair: Int] = [:]
        var unreadable = 0
        for attempt in attempts where attempt.accepted && !attempt.isClear {
            guard let notification = attempt.notification else {
                unreadable += 1
                continue
            }
            counts[Pair(notification: notification, platform: attempt.platform, deviceKey: attempt.deviceKey), default: 0] += 1
        }
        return (counts, unreadable)
    }

    /// Compares.
    init(ledger: [UUID: String], devices: [ChaosDevice], attempts: [PushAttempt]) {
        let expectedPairs = Self.expectedPairs(ledger: ledger, devices: devices)
        let (counts, unreadable) = Self.acceptedCounts(attempts)
        committed = ledger.count
        expected = expectedPairs.count
        for pair in expectedPairs {
            if counts[pair] != nil {
                delivered += 1
            } else {
                lost += 1
                if lostExamples.count < 5 { lostExamples.append(pair) }
            }
        }
        unexpected = unreadable
        clears = attempts.filter { $0.accepted && $0.isClear }.count
        for (pair, count) in counts {
            if !expectedPairs.contains(pair) { unexpected += count }
            duplicates += count - 1
        }
    }
}
