import Foundation

/// One device's recent history for support (`securepush trace --device`, `GET /support/devices/{id}`): its
/// registration, its last pushes and fetches, and the refusals and changes the audit log holds. Never a token,
/// secret, payload or preview.
public struct DeviceTimeline: Sendable, Codable, Hashable {
    /// An audit event of the device (refusals, rotations, retirements, key changes).
    public struct Event: Sendable, Codable, Hashable {
        public var at: Date
        public var event: String
        public var reason: String?

        /// Creates a value (Store's `StatusStore` and `SupportStore` build them from their rows).
        public init(at: Date, event: String, reason: String?) {
            self.at = at
            self.event = event
            self.reason = reason
        }
    }

    /// A recent fetch.
    public struct Fetch: Sendable, Codable, Hashable {
        public var notificationID: UUID
        public var fetchedAt: Date

        /// Creates a value (Store's `StatusStore` and `SupportStore` build them from their rows).
        public init(notificationID: UUID, fetchedAt: Date) {
            self.notificationID = notificationID
            self.fetchedAt = fetchedAt
        }
    }

    /// A recent finished push.
    public struct Push: Sendable, Codable, Hashable {
        public var notificationID: UUID
        public var kind: String
        public var outcome: String
        public var attempts: Int
        public var acceptedAt: Date?
        public var finishedAt: Date
        public var lastError: String?

        /// Creates a value (Store's `StatusStore` and `SupportStore` build them from their rows).
        public init(notificationID: UUID, kind: String, outcome: String, attempts: Int, acceptedAt: Date?, finishedAt: Date, lastError: String?) {
            self.notificationID = notificationID
            self.kind = kind
            self.outcome = outcome
            self.attempts = attempts
            self.acceptedAt = acceptedAt
            self.finishedAt = finishedAt
            self.lastError = lastError
        }
    }

    public var deviceID: UUID
    public var found: Bool
    public var userID: String?
    public var platform: String?
    public var active: Bool?
    public var registeredAt: Date?
    public var lastSeenAt: Date?
    public var deactivatedReason: String?
    public var sealing: Bool?
    /// Deliveries waiting for this device.
    public var waiting: Int = 0
    public var pushes: [Push] = []
    public var fetches: [Fetch] = []
    public var events: [Event] = []
    public var explanation: [String] = []

    public init(deviceID: UUID) {
        self.deviceID = deviceID
        self.found = false
    }
}
