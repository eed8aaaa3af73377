import Foundation
import Hummingbird
import NIOCore
import SecurePushCore
import SecurePushStore

/// `GET /v1/notifications/{id}`, `GET /v1/notifications` and `POST /v1/notifications/fetch` (device
/// credential). Every route that returns a payload also records, in the same statement, the
/// notification's first read and this device's first fetch.
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
            return JSONResponse.raw(.ok, NotificationJSON.single(notification))
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
        var includePayload = false
        if let raw = query.get("include") {
            guard raw == "payload" else {
                throw APIError(.badRequest, code: "invalid_parameter", message: "\"include\" must be payload.")
            }
            includePayload = true
        }
        let after = cursor
        if includePayload {
            let pageSize = limit
            let items = try await api.database {
                try await $0.notifications.listFetching(
                    userID: device.userID, deviceID: device.deviceID, unreadOnly: unreadOnly, limit: pageSize, after: after)
            }
            let page = items.prefix { $0.payloadJSON != nil }.prefix(limit)
            let next = items.count > page.count ? page.last?.cursor.token : nil
            return JSONResponse.raw(.ok, NotificationJSON.page(page, nextCursor: next))
        }
        let fetch = limit + 1
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

    /// `POST /v1/notifications/fetch`: the payloads of up to 50 of the caller's notifications in one round
    /// trip (one statement); ids that are unknown, another user's, expired or purged are listed as missing.
    func fetch(_ request: Request, context: APIRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let (limit, timeout) = (api.limits.maxRequestBodyBytes, api.limits.bodyReadTimeout)
        let body: ByteBuffer
        do {
            body = try await withDeadline(timeout) { try await request.body.collect(upTo: limit) }
        } catch is DeadlineExceeded {
            throw APIError(.requestTimeout, code: "request_timeout", message: "The request body did not arrive in time.")
        }
        let ids = try FetchRequestInput(json: Data(buffer: body)).ids.map(\.uuid)
        let results = try await api.database {
            try await $0.notifications.fetch(ids: ids, userID: device.userID, deviceID: device.deviceID)
        }
        return JSONResponse.raw(.ok, NotificationJSON.batch(results))
    }
}
