import Foundation

/// A user's daily quiet window in an IANA time zone: pushes that would arrive inside it wait for its end,
/// computed by the server across daylight-saving changes. `start` after `end` spans midnight.
public struct QuietHours: Sendable, Hashable, Codable {
    /// The IANA time zone name, e.g. `TimeZone.current.identifier`.
    public var timeZone: String
    /// The local start, `HH:MM`.
    public var start: String
    /// The local end, `HH:MM` (exclusive).
    public var end: String

    /// Creates quiet hours.
    public init(timeZone: String = TimeZone.current.identifier, start: String, end: String) {
        self.timeZone = timeZone
        self.start = start
        self.end = end
    }

    enum CodingKeys: String, CodingKey {
        case timeZone = "time_zone"
        case start, end
    }

    /// `{"quiet_hours": ... | null}`.
    struct Body: Decodable {
        var quietHours: QuietHours?

        enum CodingKeys: String, CodingKey {
            case quietHours = "quiet_hours"
        }
    }
}

/// A category of the user's notifications and whether the user muted it.
public struct NotificationCategory: Sendable, Hashable, Decodable {
    /// The producer's name for it.
    public var name: String
    /// Whether it is muted (stored and listed, never pushed).
    public var muted: Bool
    /// The newest delivered notification of it, if any.
    public var latestAt: Date?

    enum CodingKeys: String, CodingKey {
        case name, muted
        case latestAt = "latest_at"
    }

    /// `{"categories": [...]}`.
    struct List: Decodable {
        var categories: [NotificationCategory]
    }
}
