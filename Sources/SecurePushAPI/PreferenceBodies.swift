import Foundation
import HTTPTypes
import SecurePushCore
import SecurePushStore

/// `GET/PUT /v1/quiet-hours`: `{"quiet_hours": {"time_zone", "start", "end"} | null}`.
struct QuietHoursBody: Encodable {
    @Nullable var quietHours: Window?

    init(_ hours: QuietHours?) {
        self.quietHours = hours.map { Window(timeZone: $0.timeZone, start: $0.start, end: $0.end) }
    }

    /// The window as the API spells it (also `PUT`'s body).
    struct Window: Codable {
        var timeZone: String
        var start: String
        var end: String

        enum CodingKeys: String, CodingKey {
            case timeZone = "time_zone"
            case start, end
        }

        /// The window, once its times are `HH:MM` (00:00 to 23:59) and differ; the zone is checked by the database.
        func validated() throws -> QuietHours {
            for (name, value) in [("start", start), ("end", end)] where !Self.isClockTime(value) {
                throw APIError(.badRequest, code: .invalidParameter, message: "\"\(name)\" must be a local time HH:MM, 00:00 to 23:59.")
            }
            guard start != end else {
                throw APIError(.badRequest, code: .invalidParameter, message: "\"start\" and \"end\" must differ.")
            }
            guard (1...64).contains(timeZone.utf8.count), !timeZone.contains("\u{0}") else {
                throw APIError(.badRequest, code: .invalidParameter, message: "\"time_zone\" must be an IANA time zone name such as Europe/Berlin.")
            }
            return QuietHours(timeZone: timeZone, start: start, end: end)
        }

        static func isClockTime(_ text: String) -> Bool {
            let digits = Array(text.utf8)
            guard digits.count == 5, digits[2] == UInt8(ascii: ":") else { return false }
            let values = [digits[0], digits[1], digits[3], digits[4]].map { Int($0) - 48 }
            guard values.allSatisfy({ (0...9).contains($0) }) else { return false }
            return values[0] * 10 + values[1] < 24 && values[2] * 10 + values[3] < 60
        }
    }
}

/// `GET /v1/categories`.
struct CategoriesBody: Encodable {
    var categories: [CategoryBody]
}

/// One category and whether the user muted it.
struct CategoryBody: Encodable {
    var name: String
    var muted: Bool
    @Nullable var latestAt: Date?

    init(name: String, muted: Bool, latestAt: Date?) {
        self.name = name
        self.muted = muted
        self.latestAt = latestAt
    }

    init(_ state: CategoryState) {
        self.init(name: state.name, muted: state.muted, latestAt: state.latestAt)
    }
}
