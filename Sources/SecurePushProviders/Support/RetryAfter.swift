import Foundation

/// Parses an HTTP `Retry-After` value: delay seconds or an HTTP date (RFC 9110 §10.2.3).
package enum RetryAfter {
    /// The delay the header asks for, or `nil` when absent or unparsable. Capped at one day.
    package static func parse(_ value: String?, now: Date = Date()) -> Duration? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int(value) {
            return seconds >= 0 ? .seconds(min(seconds, 86_400)) : nil
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        let seconds = max(0, Int(date.timeIntervalSince(now).rounded(.up)))
        return .seconds(min(seconds, 86_400))
    }
}
