import Foundation
import SecurePushCore
import SecurePushStore

/// Reads typed values from a string map (the environment with flags merged over it), failing with
/// an error that names the variable and what it expects.
public struct ConfigurationValues: Sendable {
    /// The raw values, keyed by environment variable name.
    public var values: [String: String]

    /// Creates a reader.
    public init(_ values: [String: String]) {
        self.values = values
    }

    /// A non-empty string, or `nil`.
    public func string(_ key: String) -> String? {
        guard let value = values[key]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        return value
    }

    /// The non-empty values among `keys`.
    public func strings(_ keys: some Sequence<String>) -> [String: String] {
        Dictionary(uniqueKeysWithValues: keys.compactMap { key in string(key).map { (key, $0) } })
    }

    /// An integer within `range`, or `defaultValue` when unset.
    public func int(_ key: String, default defaultValue: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let raw = string(key) else { return defaultValue }
        guard let value = Int(raw), range.contains(value) else {
            throw ConfigurationError("\(key) must be an integer between \(range.lowerBound) and \(range.upperBound), got \"\(raw)\"")
        }
        return value
    }

    /// `flag` (a typed command-line value) when given, else the variable; either must lie within `range`.
    public func int(_ key: String, flag: Int?, default defaultValue: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let flag else { return try int(key, default: defaultValue, in: range) }
        guard range.contains(flag) else {
            throw ConfigurationError("the flag for \(key) must be an integer between \(range.lowerBound) and \(range.upperBound), got \(flag)")
        }
        return flag
    }

    /// `flag` (a typed command-line value) when given, else the variable; either must lie within `range`.
    public func duration(_ key: String, flag: Duration?, default defaultValue: Duration, in range: ClosedRange<Duration>) throws -> Duration {
        guard let flag else { return try duration(key, default: defaultValue, in: range) }
        guard range.contains(flag) else {
            throw ConfigurationError(
                "the flag for \(key) must be between \(Self.format(range.lowerBound)) and \(Self.format(range.upperBound)), got \(Self.format(flag))")
        }
        return flag
    }

    /// A duration such as `250ms`, `5s`, `10m`, `2h`, `7d` (a bare number is seconds) within `range`.
    public func duration(_ key: String, default defaultValue: Duration, in range: ClosedRange<Duration>) throws -> Duration {
        guard let raw = string(key) else { return defaultValue }
        guard let value = Self.parseDuration(raw), range.contains(value) else {
            throw ConfigurationError(
                "\(key) must be a duration like 250ms, 5s, 10m, 2h or 7d between \(Self.format(range.lowerBound)) and \(Self.format(range.upperBound)), got \"\(raw)\""
            )
        }
        return value
    }

    /// One of `allowed`, or `defaultValue` when unset.
    public func choice(_ key: String, default defaultValue: String, allowed: [String]) throws -> String {
        guard let raw = string(key)?.lowercased() else { return defaultValue }
        guard allowed.contains(raw) else {
            throw ConfigurationError("\(key) must be one of \(allowed.joined(separator: ", ")), got \"\(raw)\"")
        }
        return raw
    }

    /// A comma-separated list of addresses and CIDR blocks (`10.8.0.0/16, fd00::/8, 192.0.2.7`);
    /// empty when unset. An entry that is not one is an error naming the key.
    public func networks(_ key: String) throws -> [IPNetwork] {
        guard let raw = string(key) else { return [] }
        return try ProviderSettings.list(raw).map { entry in
            guard let network = IPNetwork(entry) else {
                throw ConfigurationError(
                    "\(key) lists \"\(entry)\", which is not an address or a CIDR block such as 10.8.0.0/16 or fd00::/8 (host bits must be zero)")
            }
            return network
        }
    }

    /// Parses `<number><unit>` with unit ms, s, m, h or d.
    public static func parseDuration(_ text: String) -> Duration? {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]
        let lower = text.lowercased()
        for (suffix, factor) in units where lower.hasSuffix(suffix) {
            guard let number = Double(lower.dropLast(suffix.count)), number.isFinite, number >= 0 else { return nil }
            return .milliseconds(Int64((number * factor * 1000).rounded()))
        }
        guard let seconds = Double(lower), seconds.isFinite, seconds >= 0 else { return nil }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    static func format(_ duration: Duration) -> String {
        let ms = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        if ms % 86_400_000 == 0 { return "\(ms / 86_400_000)d" }
        if ms % 3_600_000 == 0 { return "\(ms / 3_600_000)h" }
        if ms % 60_000 == 0 { return "\(ms / 60_000)m" }
        if ms % 1000 == 0 { return "\(ms / 1000)s" }
        return "\(ms)ms"
    }
}
