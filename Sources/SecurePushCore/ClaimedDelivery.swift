import Foundation

/// A delivery a dispatcher holds under a lease: the push to send and the delivery's row id.
public struct ClaimedDelivery: Sendable, Hashable {
    /// The delivery's random identifier.
    public var id: UUID
    /// The push to send (its `attempt` is this claim's attempt number).
    public var push: Push
    /// Whether the device was still active when claimed; an inactive one is cancelled, not pushed.
    public var deviceActive: Bool

    /// Creates a claimed delivery.
    public init(id: UUID, push: Push, deviceActive: Bool = true) {
        self.id = id
        self.push = push
        self.deviceActive = deviceActive
    }
}

/// A batch claimed in one statement under one lease token.
public struct ClaimedBatch: Sendable {
    /// The fencing token: completions only count while the deliveries still carry it.
    public var leaseToken: UUID
    /// The claimed deliveries, most urgent first.
    public var deliveries: [ClaimedDelivery]

    /// Creates a batch.
    public init(leaseToken: UUID, deliveries: [ClaimedDelivery]) {
        self.leaseToken = leaseToken
        self.deliveries = deliveries
    }
}
