import Foundation
import Hummingbird
import SecurePushCore

/// The body of `POST /v1/notifications/fetch`: `{"ids": [...]}` with 1 to `maxIDs` notification ids, exactly
/// as `docs/openapi.json` describes it. Repeated ids are collapsed (the first occurrence keeps its place).
struct FetchRequestInput {
    /// The most ids one request may ask for.
    static let maxIDs = 50

    /// The distinct ids, in the order first given.
    var ids: [NotificationID]

    /// Reads and parses the request's body, bounded by the body size limit and the body read timeout.
    static func read(_ request: Request, limits: APILimits) async throws -> FetchRequestInput {
        try FetchRequestInput(json: try await RequestBody.read(request, limits: limits))
    }

    init(json: Data) throws {
        guard let object = (try? JSONSerialization.jsonObject(with: json)) as? [String: Any] else {
            throw APIError(.badRequest, code: .invalidJSON, message: "The body must be a JSON object: {\"ids\": [\"<id>\", ...]}.")
        }
        let unknown = object.keys.filter { $0 != "ids" }.sorted()
        guard unknown.isEmpty else {
            throw Self.invalid("Unknown field(s): \(unknown.joined(separator: ", ")); the body is {\"ids\": [...]}.")
        }
        guard let list = object["ids"] as? [Any] else {
            throw Self.invalid("\"ids\" is required: an array of 1 to \(Self.maxIDs) notification ids.")
        }
        guard (1...Self.maxIDs).contains(list.count) else {
            throw Self.invalid("\"ids\" must hold 1 to \(Self.maxIDs) notification ids; it holds \(list.count).")
        }
        var seen: Set<NotificationID> = []
        var ids: [NotificationID] = []
        for (index, element) in list.enumerated() {
            // JSONSerialization hands back JSON strings as String; numbers, booleans and null are refused here.
            guard let text = element as? String, let id = NotificationID(text) else {
                throw Self.invalid("\"ids[\(index)]\" is not a notification id (a UUID such as 0f8fad5b-d9cb-469f-a165-70867728950e).")
            }
            if seen.insert(id).inserted { ids.append(id) }
        }
        self.ids = ids
    }

    static func invalid(_ message: String) -> APIError {
        APIError(.badRequest, code: .invalidIDs, message: message)
    }
}
