import Foundation
import Hummingbird
import NIOCore
import SecurePushCore
import SecurePushStore
import Tracing

/// `GET /v1/notifications/{id}`, `GET /v1/notifications` and `POST /v1/notifications/fetch` (device
/// credential). Each is one round trip: one SQL function checks the credential and reads; every route
/// that returns a payload also records, in the same statement, the notification's first read and this
/// device's first fetch. Invalid input is answered after the credential is checked, so a bad
/// credential is always 401.
struct NotificationRoutes: Sendable {
    let api: APIContext
    let gate: DeviceGate

    func read(_ request: Request, context: APIRequestContext) async throws -> Response {
        let start = DefaultTracerClock.now
        let (_, results) = try await gate.read(context: context) {
            guard let id = NotificationID(context.parameters.get("id") ?? "") else {
                throw APIError(.badRequest, code: .invalidID, message: "A notification id is a UUID such as 0f8fad5b-d9cb-469f-a165-70867728950e.")
            }
            return id
        } _: { stores, proof, id in
            try await stores.notifications.fetch(ids: [id.uuid], as: proof)
        }
        FetchTracing.record(results, route: "/v1/notifications/{id}", start: start)
        switch results.first?.result ?? .notFound {
        case .found(let notification):
            return JSONResponse.raw(.ok, NotificationJSON.single(notification))
        case .gone:
            throw APIError(.gone, code: .gone, message: "This notification expired or its content was deleted.")
        case .notFound:
            throw APIError.notFound
        }
    }

    func list(_ request: Request, context: APIRequestContext) async throws -> Response {
        let (query, items) = try await gate.read(context: context) {
            try ListQuery(request.uri.queryParameters)
        } _: { stores, proof, query in
            try await stores.notifications.list(
                as: proof, unreadOnly: query.unreadOnly, limit: query.limit, after: query.cursor, payloads: query.includePayload)
        }
        if query.includePayload {
            let page = items.prefix { $0.notification.payloadJSON != nil }.prefix(query.limit)
            let next = items.count > page.count ? page.last?.cursor.token : nil
            return JSONResponse.raw(.ok, NotificationJSON.page(page, nextCursor: next))
        }
        let page = items.prefix(query.limit)
        return try JSONResponse.make(
            NotificationPageBody(
                notifications: page.map {
                    NotificationItemBody($0.notification)
                },
                nextCursor: items.count > query.limit ? page.last?.cursor.token : nil
            )
        )
    }

    /// `POST /v1/notifications/fetch`: the payloads of up to 50 of the caller's notifications in one round
    /// trip (one statement); ids that are unknown, another user's, expired or purged are listed as missing.
    func fetch(_ request: Request, context: APIRequestContext) async throws -> Response {
        let start = DefaultTracerClock.now
        let (_, results) = try await gate.read(context: context) {
            try await FetchRequestInput.read(request, limits: api.limits).ids.map(\.uuid)
        } _: { stores, proof, ids in
            try await stores.notifications.fetch(ids: ids, as: proof)
        }
        FetchTracing.record(results, route: "/v1/notifications/fetch", start: start)
        return JSONResponse.raw(.ok, NotificationJSON.batch(results))
    }
}
