import Foundation
import SecurePushCore

/// The ranges the relay accepts in a `RelayPush`, field by field: what a self-hosted server can send, with room,
/// and nothing that makes an envelope trap or points a platform request somewhere else. A push outside them is
/// refused on its own (`RelayWireError`); the rest of its batch goes on.
public enum RelayPushLimits {
    /// How far in the past an expiry may be (clocks differ; a push that has expired gets a TTL of 0).
    public static let expiredGrace: TimeInterval = 86_400
    /// The longest TTL a relayed push may ask for (a year; FCM and WNS keep a push for weeks at most).
    public static let longestTTL: TimeInterval = 366 * 86_400
    /// The producer's priority is a `smallint` on the self-hosted side.
    public static let priorities = Int(Int16.min)...Int(Int16.max)
    /// Attempt numbers (`SECUREPUSH_MAX_ATTEMPTS` is at most 100; 0 is read as 1).
    public static let attempts = 0...1_000
    /// Badge counts (a count of unread notifications).
    public static let badges = 0...Int(Int32.max)
    /// The most ids a read-sync clear carries (the self-hosted side sends at most 20).
    public static let maxClearIDs = 100
    /// A token's length in characters (Unicode scalars, as `securepush.validate_device_options` and JSON
    /// Schema's `maxLength` count them).
    public static let tokenLengths = 1...4096
    /// The longest option value (as `securepush.validate_device_options`).
    public static let maxOptionLength = 512

    /// Refuses a token `platform` could not have issued, by the rules `securepush.validate_device_options` applies at
    /// registration (issue 48: a relay took tokens with CR/LF): 1 to 4096 characters and nothing but printable
    /// ASCII; an APNs token an even number of hexadecimal digits (32 to 400), an FCM token 20 or more of
    /// `A-Z a-z 0-9 _ : . -`, a WNS channel an `https://host[:port]/…` URI. The message never names the token.
    public static func check(token: String, platform: Platform) throws {
        guard tokenLengths.contains(token.unicodeScalars.count) else {
            throw RelayWireError("the token is empty or longer than 4096 characters")
        }
        guard token.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
            throw RelayWireError("the token has a character outside printable ASCII")
        }
        let valid: Bool
        switch platform {
        case .apns:
            valid = (32...400).contains(token.count) && token.count % 2 == 0 && token.allSatisfy(\.isHexDigit)
        case .fcm:
            valid = token.count >= 20 && token.allSatisfy { $0.isLetter || $0.isNumber || "_:.-".contains($0) }
        case .wns:
            valid = isChannelURI(token)
        default:
            valid = false
        }
        guard valid else { throw RelayWireError("the token is not a \(platform.rawValue) token") }
    }

    /// Whether `value` starts `https://host[:port]/` (host: letters, digits, `.` and `-`).
    static func isChannelURI(_ value: String) -> Bool {
        guard value.hasPrefix("https://") else { return false }
        let rest = value.dropFirst("https://".count)
        guard let slash = rest.firstIndex(of: "/") else { return false }
        let authority = rest[..<slash].split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let host = authority.first, !host.isEmpty, host.allSatisfy({ $0.isLetter || $0.isNumber || ".-".contains($0) }) else {
            return false
        }
        return authority.count == 1 || (!authority[1].isEmpty && authority[1].allSatisfy(\.isNumber))
    }

    /// Refuses an expiry more than `expiredGrace` in the past or more than `longestTTL` ahead of `now`.
    public static func check(expires: Int64, now: Date) throws {
        let seconds = now.timeIntervalSince1970
        guard Double(expires) >= seconds - expiredGrace, Double(expires) <= seconds + longestTTL else {
            throw RelayWireError("expires must be seconds since 1970 between a day ago and a year from now")
        }
    }

    /// Refuses a priority, attempt or badge out of range.
    public static func check(priority: Int, attempt: Int, badge: Int?) throws {
        guard priorities.contains(priority) else {
            throw RelayWireError("priority must be between \(priorities.lowerBound) and \(priorities.upperBound)")
        }
        guard attempts.contains(attempt) else { throw RelayWireError("attempt must be between 0 and \(attempts.upperBound)") }
        if let badge, !badges.contains(badge) { throw RelayWireError("badge must be between 0 and \(badges.upperBound)") }
    }

    /// Refuses options a device of `platform` cannot have registered (the rules of
    /// `securepush.validate_device_options` for the relayed platforms); an FCM project names a path segment.
    public static func check(options: [String: String], platform: Platform) throws {
        let allowed = allowedOptions[platform] ?? []
        if let unknown = options.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw RelayWireError("option \(unknown) is not one of \(platform.rawValue)'s (\(allowed.sorted().joined(separator: ", ")))")
        }
        for (name, value) in options where value.utf8.count > maxOptionLength || !accepts(name, value) {
            throw RelayWireError("option \(name) has a value \(platform.rawValue) does not accept")
        }
    }

    /// The options of each relayed platform.
    static let allowedOptions: [Platform: Set<String>] = [.apns: ["environment", "push_style", "topic"], .fcm: ["project"], .wns: []]

    /// Whether option `name` accepts `value`.
    static func accepts(_ name: String, _ value: String) -> Bool {
        switch name {
        case "environment": ["production", "sandbox"].contains(value)
        case "push_style": ["silent", "alert"].contains(value)
        case "topic": isName(value, maxLength: 255, extra: ".-")
        // A Google Cloud project id (lower-case letters, digits and hyphens; `domain.com:id` for the old
        // domain-scoped ones): never a slash, a dot-dot or anything else a URL path gives meaning to.
        case "project":
            isProject(value)
        default: false
        }
    }

    /// Whether `value` is a project id: one name, or two joined by `:`, with no `..` anywhere.
    static func isProject(_ value: String) -> Bool {
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count <= 2 && !value.contains("..") && parts.allSatisfy { isName(String($0), maxLength: 63, extra: ".-") }
    }

    /// Whether `value` is 1 to `maxLength` ASCII letters, digits and `extra`, starting with a letter or digit.
    static func isName(_ value: String, maxLength: Int, extra: String) -> Bool {
        guard let first = value.first, first.isASCII, first.isLetter || first.isNumber, value.count <= maxLength else { return false }
        return value.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || extra.contains($0)) }
    }
}
