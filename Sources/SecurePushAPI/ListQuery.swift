import Hummingbird
import SecurePushStore

/// The query of `GET /v1/notifications`: `unread`, `limit` (1 to 100, default 50), `cursor` and
/// `include=payload`, each checked with a precise 400.
struct ListQuery: Sendable {
    var unreadOnly = false
    var limit = 50
    var cursor: ListCursor?
    var includePayload = false

    init(_ query: Parameters) throws {
        switch query.get("unread").map({ String($0) }) {
        case nil, "false", "0": unreadOnly = false
        case "true", "1": unreadOnly = true
        default: throw APIError(.badRequest, code: .invalidParameter, message: "\"unread\" must be true or false.")
        }
        if let raw = query.get("limit") {
            guard let value = Int(raw), (1...100).contains(value) else {
                throw APIError(.badRequest, code: .invalidParameter, message: "\"limit\" must be an integer from 1 to 100.")
            }
            limit = value
        }
        if let raw = query.get("cursor") {
            guard let parsed = ListCursor(token: String(raw)) else {
                throw APIError(.badRequest, code: .invalidCursor, message: "\"cursor\" must be a value returned as next_cursor.")
            }
            cursor = parsed
        }
        if let raw = query.get("include") {
            guard raw == "payload" else {
                throw APIError(.badRequest, code: .invalidParameter, message: "\"include\" must be payload.")
            }
            includePayload = true
        }
    }
}
