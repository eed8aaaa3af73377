import Foundation

/// The API's one way to write a date, wherever it appears: `/v1`'s JSON, `/status`'s JSON and page, and
/// `securepush status --json`, `securepush trace` and the simulated outbox: ISO 8601 in UTC with milliseconds
/// (`2026-11-26T19:20:05.123Z`).
public enum APITimestamp {
    /// `date` written the one way.
    public static func string(_ date: Date) -> String {
        Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date)
    }

    /// The same as a `JSONEncoder` strategy.
    public static var encodingStrategy: JSONEncoder.DateEncodingStrategy {
        .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(string(date))
        }
    }
}
