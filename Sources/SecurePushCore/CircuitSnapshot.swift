import Foundation

/// One circuit breaker that is not closed, as a dispatcher's heartbeat records it and `/status` shows it.
public struct CircuitSnapshot: Sendable, Hashable, Codable {
    /// The platform's name.
    public var platform: String
    /// The push service host for per-host platforms (Web Push, WNS); `nil` for a whole platform.
    @Nullable public var host: String?
    /// `open` or `half_open`.
    public var state: CircuitBreaker.Phase
    /// When an open breaker lets a probe through (wall clock); `nil` when half-open.
    @Nullable public var openUntil: Date?

    /// Creates a snapshot.
    public init(platform: String, host: String?, state: CircuitBreaker.Phase, openUntil: Date?) {
        self.platform = platform
        self.host = host
        self.state = state
        self.openUntil = openUntil
    }

    /// The encoder for the `securepush.dispatchers.circuits` column (snake_case keys, ISO 8601 dates).
    public static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// The decoder matching `encoder`.
    public static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
