/// What a push platform said about one push.
public enum PushResult: Sendable, Hashable {
    /// Accepted by the platform, with the platform's message id when it gives one.
    case sent(messageID: String?)
    /// A transient failure: try again, no sooner than `after` when the platform said so.
    case retry(after: Duration?, reason: String)
    /// The token is dead (unregistered, expired, not for this app): deactivate the device.
    case tokenInvalid(reason: String)
    /// A permanent failure that retrying cannot fix (our bug or configuration).
    case failed(reason: String)
}
