import NIOConcurrencyHelpers
import SecurePushCore

/// The recipients this dispatcher pushed to since the last badge fold: `MaintenanceService` folds their badge
/// rows (`securepush.fold_badges`) every `badgeFoldInterval`, so a claim's walk of a busy recipient's rows stays
/// about one interval long, and an idle dispatcher folds nothing. At most `capacity` users wait; more are left
/// to the 5 s sweep of every user (the user ids are the producers': never logged).
public final class BadgeRecipients: Sendable {
    /// Users that wait for the next fold, at most.
    public static let capacity = 50_000

    private let users = NIOLockedValueBox<Set<String>>([])

    /// Creates an empty set.
    public init() {}

    /// Notes the recipients of a claimed batch.
    public func record(_ batch: ClaimedBatch) {
        users.withLockedValue { users in
            for delivery in batch.deliveries {
                guard let user = delivery.user, users.count < Self.capacity else { continue }
                users.insert(user)
            }
        }
    }

    /// Puts back users a fold took but could not fold (an outage, a deadline), for the next round; within `capacity`.
    public func restore(_ taken: some Sequence<String>) {
        users.withLockedValue { users in
            for user in taken where users.count < Self.capacity { users.insert(user) }
        }
    }

    /// Takes every waiting user, in user order (so that two folds take overlapping users' rows in one order).
    public func take() -> [String] {
        users.withLockedValue { users in
            defer { users.removeAll(keepingCapacity: true) }
            return users.sorted()
        }
    }
}
