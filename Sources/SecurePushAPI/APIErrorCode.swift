/// Every machine code the API answers with, spelled once: the `code` of `{"error": {"code": ..., "message": ...}}`.
/// Clients switch on these words; a new one is a new case here and in `docs/openapi.json`'s error schema.
public enum APIErrorCode: Sendable, Hashable {
    case badRequest
    case invalidJSON
    case invalidID
    case invalidIDs
    case invalidDevice
    case invalidParameter
    case invalidCursor
    case unauthorized
    case notFound
    case gone
    case methodNotAllowed
    case requestTimeout
    case payloadTooLarge
    case tooManyRequests
    case notConfigured
    case notReady
    case unavailable
    case internalError
    /// Any other HTTP error the framework raised: `http_<status>`.
    case http(status: Int)

    /// The word on the wire.
    public var text: String {
        switch self {
        case .badRequest: "bad_request"
        case .invalidJSON: "invalid_json"
        case .invalidID: "invalid_id"
        case .invalidIDs: "invalid_ids"
        case .invalidDevice: "invalid_device"
        case .invalidParameter: "invalid_parameter"
        case .invalidCursor: "invalid_cursor"
        case .unauthorized: "unauthorized"
        case .notFound: "not_found"
        case .gone: "gone"
        case .methodNotAllowed: "method_not_allowed"
        case .requestTimeout: "request_timeout"
        case .payloadTooLarge: "payload_too_large"
        case .tooManyRequests: "too_many_requests"
        case .notConfigured: "not_configured"
        case .notReady: "not_ready"
        case .unavailable: "unavailable"
        case .internalError: "internal_error"
        case .http(let status): "http_\(status)"
        }
    }

    /// The named codes (every case but `http`), for checks against the API contract.
    public static let named: [APIErrorCode] = [
        .badRequest, .invalidJSON, .invalidID, .invalidIDs, .invalidDevice, .invalidParameter, .invalidCursor, .unauthorized,
        .notFound, .gone, .methodNotAllowed, .requestTimeout, .payloadTooLarge, .tooManyRequests, .notConfigured, .notReady,
        .unavailable, .internalError,
    ]
}
