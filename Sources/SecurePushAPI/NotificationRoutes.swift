import Foundation
import Hummingbird
import SecurePushCore
import SecurePushStore

/// `GET /v1/notifications/{id}` and `GET /v1/notifications` (device credential).
struct NotificationRoutes: Sendable {
    let api: APIContext

    func read(_ request: Request, context: APIRequestContext) async throws -> Response {
        let rawID = context.parameters.get("id") ?? ""
        let device = try context.requireDevice()
        guard let id = NotificationID(rawID) else {
            throw APIError(.badRequest, code: "invalid_id", message: "A notification id is a UUID such as 0f8fad5b-d9cb-469f-a165-70867728950e.")
        }
        let result = try await api.database {
            try await $0.notifications.read(id: id.uuid, userID: device.userID, deviceID: device.deviceID)
        }
        switch result {
        case .found(let notification):
            // The payload is JSON text from PostgreSQL, spliced in as is.
            var body = #"{"created_at":"\#(JSONResponse.timestamp(notification.createdAt))","id":"\#(id)","payload":"#
            body += notification.payloadJSON
            body += #","read_at":"#
            body += notification.readAt.map { "\"\(JSONResponse.timestamp($0))\"" } ?? "null"
            body += "}"
            return JSONResponse.raw(.ok, Array(body.utf8))
        case .gone:
            throw APIError(.gone, code: "gone", message: "This notification expired or its content was deleted.")
        case .notFound:
            throw APIError.notFound
        }
    }

    func list(_ request: Request, context: APIRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let query = request.uri.queryParameters
        let unreadOnly: Bool
        switch query.get("unread").map({ String($0) }) {
        case nil, "false", "0": unreadOnly = false
        case "true", "1": unreadOnly = true
        default: throw APIError(.badRequest, code: "invalid_parameter", message: "\"unread\" must be true or false.")
        }
        var limit = 50
        if let raw = query.get("limit") {
            guard let value = Int(raw), (1...100).contains(value) else {
                throw APIError(.badRequest, code: "invalid_parameter", message: "\"limit\" must be an integer from 1 to 100.")
            }
            limit = value
        }
        var cursor: ListCursor?
        if let raw = query.get("cursor") {
            guard let parsed = ListCursor(token: String(raw)) else {
                throw APIError(.badRequest, code: "invalid_cursor", message: "\"cursor\" must be a value returned as next_cursor.")
            }
            cursor = parsed
        }
        let (after, fetch) = (cursor, limit + 1)
        let items = try await api.database {
            try await $0.notifications.list(userID: device.userID, unreadOnly: unreadOnly, limit: fetch, after: after)
        }
        let page = items.prefix(limit)
        return try JSONResponse.make(
            NotificationPageBody(
                notifications: page.map { NotificationItemBody(id: $0.id.uuidString.lowercased(), createdAt: $0.createdAt, readAt: $0.readAt) },
                nextCursor: items.count > limit ? page.last?.cursor.token : nil
            )
        )
    }
}
