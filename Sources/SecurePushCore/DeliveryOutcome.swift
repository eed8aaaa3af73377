import Foundation

/// What the dispatcher decided for one claimed delivery, written back in one set-based statement.
public enum DeliveryOutcome: Sendable, Hashable {
    /// Pushed; kept in the history with the provider's message id.
    case sent(messageID: String?)
    /// Back to pending, to run again after `delay`.
    case retry(delay: Duration, error: String)
    /// Terminally failed, with the last error kept for inspection.
    case failed(error: String)
    /// The token is dead: deactivate the device and cancel its pending deliveries.
    case tokenInvalid(error: String)
    /// The notification expired before it could be pushed.
    case expired
    /// Not pushed because the device was deactivated meanwhile.
    case cancelled(reason: String)

    /// The outcome's name, as stored in `securepush.delivery_log.outcome` and used in metrics and logs.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case sent
        case retry
        case failed
        case tokenInvalid = "token_invalid"
        case expired
        case cancelled
        /// Replaced, before it was pushed, by a newer notification with the same collapse key (written by the
        /// database's fan-out, never by a dispatcher).
        case superseded

        /// The kinds that end a delivery (every kind but `retry`): exactly the values the
        /// `delivery_log_outcome_valid` CHECK constraint allows.
        public static let final: [Kind] = allCases.filter { $0 != .retry }
    }

    /// This outcome's kind.
    public var kind: Kind {
        switch self {
        case .sent: .sent
        case .retry: .retry
        case .failed: .failed
        case .tokenInvalid: .tokenInvalid
        case .expired: .expired
        case .cancelled: .cancelled
        }
    }

    /// The text kept with the outcome: the provider's message id for `sent`, otherwise the reason.
    public var detail: String {
        switch self {
        case .sent(let messageID): messageID ?? ""
        case .retry(_, let error), .failed(let error), .tokenInvalid(let error): error
        case .expired: "notification expired"
        case .cancelled(let reason): reason
        }
    }
}

/// One completion: a delivery and its outcome.
public struct DeliveryCompletion: Sendable, Hashable {
    /// The delivery's identifier.
    public var deliveryID: UUID
    /// What happened.
    public var outcome: DeliveryOutcome
    /// When the platform answered (the dispatcher's monotonic clock), for a push that was sent: the
    /// queue records it as `accepted_at`, which can be earlier than the write of the whole batch.
    public var answeredAt: ContinuousClock.Instant?

    /// Creates a completion.
    public init(deliveryID: UUID, outcome: DeliveryOutcome, answeredAt: ContinuousClock.Instant? = nil) {
        self.deliveryID = deliveryID
        self.outcome = outcome
        self.answeredAt = answeredAt
    }
}
