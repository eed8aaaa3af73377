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
}

/// One completion: a delivery and its outcome.
public struct DeliveryCompletion: Sendable, Hashable {
    /// The delivery's identifier.
    public var deliveryID: UUID
    /// What happened.
    public var outcome: DeliveryOutcome

    /// Creates a completion.
    public init(deliveryID: UUID, outcome: DeliveryOutcome) {
        self.deliveryID = deliveryID
        self.outcome = outcome
    }
}
