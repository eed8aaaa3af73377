import Foundation

/// A notification's content as the API returns it.
public struct FetchedNotification: Sendable, Hashable, Decodable {
    /// Its id.
    public var id: UUID
    /// The producer's JSON payload (conventionally `title` and `body` for display).
    public var payload: JSONValue
    /// When the producer enqueued it.
    public var createdAt: Date
    /// When any of the user's devices first read it (now, if this fetch was the first).
    public var readAt: Date?
    /// The producer's category, for grouping (`nil` when none).
    public var category: String?

    enum CodingKeys: String, CodingKey {
        case id, payload, category
        case createdAt = "created_at"
        case readAt = "read_at"
    }
}

/// The result of fetching one notification. Only `.unavailable` is worth retrying later.
public enum FetchResult: Sendable, Hashable {
    /// The content (the notification is now marked read).
    case found(FetchedNotification)
    /// Expired, or its content was deleted: show nothing more than the generic text.
    case gone
    /// Unknown, or not this user's (the server does not say which).
    case notFound
    /// The device credential was refused (unregistered, rotated, or the device was retired).
    case unauthorized
    /// No answer within the deadline, or the server kept failing (network errors, 5xx).
    case unavailable(reason: String)
}

/// Why an id of a batch fetch came back without content.
public enum MissingReason: String, Sendable, Hashable, Decodable {
    /// Unknown or another user's.
    case notFound = "not_found"
    /// Expired or purged.
    case gone
}

/// The result of fetching several notifications in one round trip.
public struct BatchFetchResult: Sendable, Hashable {
    /// The notifications found (now marked read).
    public var found: [FetchedNotification]
    /// The ids without content, each with its reason.
    public var missing: [UUID: MissingReason]
}

/// An API call that failed for good.
public enum SecurePushClientError: Error, Sendable, Hashable {
    /// No credential is stored: register first.
    case notRegistered
    /// The credential or user token was refused (401).
    case unauthorized
    /// The server answered with an error (`code` and `message` from its JSON error body).
    case rejected(status: Int, code: String, message: String)
    /// No usable answer within the deadline (network errors, timeouts, 5xx).
    case unavailable(reason: String)
}
