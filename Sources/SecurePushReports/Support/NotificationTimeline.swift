import Foundation

/// One notification's fate for support (`securepush trace`, `GET /support/notifications/{id}`): what the database
/// knows of it, per device, and the reasons in words. Never its payload or preview; the user id is shown because
/// the operator asked for this notification by its id.
public struct NotificationTimeline: Sendable, Codable, Hashable {
    /// A device of the notification's user, with what happened to the notification on it.
    public struct Device: Sendable, Codable, Hashable {
        public var deviceID: UUID
        public var platform: String
        public var active: Bool
        public var registeredAt: Date
        /// Waiting deliveries (`scheduled`, `pending` or `claimed`).
        public var waiting: [Waiting]
        /// Finished deliveries (`delivery_log`): the outcome and its times.
        public var finished: [Finished]
        /// When the device fetched the notification, if it did.
        public var fetchedAt: Date?

        public init(
            deviceID: UUID, platform: String, active: Bool, registeredAt: Date, waiting: [Waiting], finished: [Finished], fetchedAt: Date?
        ) {
            self.deviceID = deviceID
            self.platform = platform
            self.active = active
            self.registeredAt = registeredAt
            self.waiting = waiting
            self.finished = finished
            self.fetchedAt = fetchedAt
        }
    }

    /// A delivery still waiting.
    public struct Waiting: Sendable, Codable, Hashable {
        public var kind: String
        public var state: String
        public var attempts: Int
        public var nextAttemptAt: Date
        public var lastError: String?

        public init(kind: String, state: String, attempts: Int, nextAttemptAt: Date, lastError: String?) {
            self.kind = kind
            self.state = state
            self.attempts = attempts
            self.nextAttemptAt = nextAttemptAt
            self.lastError = lastError
        }
    }

    /// A finished delivery.
    public struct Finished: Sendable, Codable, Hashable {
        public var kind: String
        public var outcome: String
        public var attempts: Int
        public var acceptedAt: Date?
        public var finishedAt: Date
        public var providerMessageID: String?
        public var lastError: String?

        public init(kind: String, outcome: String, attempts: Int, acceptedAt: Date?, finishedAt: Date, providerMessageID: String?, lastError: String?)
        {
            self.kind = kind
            self.outcome = outcome
            self.attempts = attempts
            self.acceptedAt = acceptedAt
            self.finishedAt = finishedAt
            self.providerMessageID = providerMessageID
            self.lastError = lastError
        }
    }

    public var notificationID: UUID
    public var found: Bool
    public var userID: String?
    public var createdAt: Date?
    public var deliverAt: Date?
    public var expiresAt: Date?
    public var urgency: String?
    public var category: String?
    /// When the user muted the notification's category, if they did.
    public var categoryMutedAt: Date?
    public var readAt: Date?
    public var readByDevice: UUID?
    public var payloadPurgedAt: Date?
    public var cancelledAt: Date?
    /// Committed and not yet fanned out by a dispatcher (its `securepush.fan_out_queue` row is there).
    public var awaitingFanOut = false
    public var devices: [Device] = []
    /// What the live dispatchers push (`nil` entries: a dispatcher too old to say).
    public var dispatcherPlatforms: [String]?
    /// The timeline in words, in order: what happened, and why nothing did where nothing did.
    public var explanation: [String] = []

    public init(notificationID: UUID) {
        self.notificationID = notificationID
        self.found = false
    }
}
