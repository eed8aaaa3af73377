/// What a push platform said about one push.
public enum PushResult: Sendable, Hashable {
    /// Accepted by the platform, with the platform's message id when it gives one.
    case sent(messageID: String?)
    /// A transient failure: try again, no sooner than `after` when the platform said so. `scope` says
    /// whether the push service itself is failing or throttling the sender (`.provider`: counted by the
    /// dispatcher's circuit breaker) or only this push or device is affected (`.device`).
    case retry(after: Duration?, reason: String, scope: FailureScope = .device)
    /// The token is dead (unregistered, expired, not for this app): deactivate the device.
    case tokenInvalid(reason: String)
    /// A permanent failure that retrying cannot fix (our bug or configuration).
    case failed(reason: String)
}

/// Whose trouble a transient failure (`PushResult.retry`) is.
public enum FailureScope: String, Sendable, Hashable {
    /// This push or device only: a per-device rate limit, a request we cancelled ourselves. The push
    /// service answered, so it counts as healthy.
    case device
    /// The push service: 5xx, timeouts, transport errors, a throttle on the whole sender (FCM
    /// QUOTA_EXCEEDED, WNS 406/429, Web Push 429). Counted by the circuit breaker of the platform (or host).
    case provider
}
