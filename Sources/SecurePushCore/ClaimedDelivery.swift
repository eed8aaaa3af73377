import Foundation

/// A delivery a dispatcher holds under a lease: the push to send and the delivery's row id.
public struct ClaimedDelivery: Sendable, Hashable {
    /// The delivery's random identifier.
    public var id: UUID
    /// The push to send (its `attempt` is this claim's attempt number).
    public var push: Push
    /// Whether the device was still active when claimed; an inactive one is cancelled, not pushed.
    public var deviceActive: Bool
    /// The recipient (the producer's user id), kept on this side of the providers: `Push` has no field for it,
    /// so it never reaches a wire. The dispatcher uses it to tell one user's failures and slow sends from a
    /// push service's (distinct users before a shared breaker opens, a bound on one user's sends in flight).
    /// `nil` when unknown (each such delivery then counts as a user of its own).
    public var user: String?
    /// The producer's W3C traceparent, when it gave one (`TraceParent`): the push's span continues that trace.
    /// Like `user`, it stays on this side of the providers: no push carries a trace header.
    public var traceParent: String?

    /// Creates a claimed delivery.
    public init(id: UUID, push: Push, deviceActive: Bool = true, user: String? = nil, traceParent: String? = nil) {
        self.id = id
        self.push = push
        self.deviceActive = deviceActive
        self.user = user
        self.traceParent = traceParent
    }
}

/// A claimed delivery whose row cannot become a push (an unknown platform, malformed device options).
/// The dispatcher logs it as an error and fails it; it is never sent.
public struct RejectedDelivery: Sendable, Hashable {
    /// The delivery's identifier.
    public var id: UUID
    /// Why it cannot be sent (names the problem, never the token or options' values).
    public var reason: String

    /// Creates a rejected delivery.
    public init(id: UUID, reason: String) {
        self.id = id
        self.reason = reason
    }
}

/// A batch claimed in one statement under one lease token.
public struct ClaimedBatch: Sendable {
    /// The fencing token: completions only count while the deliveries still carry it.
    public var leaseToken: UUID
    /// The claimed deliveries, most urgent first.
    public var deliveries: [ClaimedDelivery]
    /// Claimed rows that cannot be pushed; they are failed under the same lease.
    public var rejected: [RejectedDelivery]

    /// Creates a batch.
    public init(leaseToken: UUID, deliveries: [ClaimedDelivery], rejected: [RejectedDelivery] = []) {
        self.leaseToken = leaseToken
        self.deliveries = deliveries
        self.rejected = rejected
    }

    /// Whether the claim found nothing.
    public var isEmpty: Bool { deliveries.isEmpty && rejected.isEmpty }
}
