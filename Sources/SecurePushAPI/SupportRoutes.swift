import Crypto
import Foundation
import Hummingbird
import SecurePushCore
import SecurePushStore

/// The support lookup on the operations listener (`SECUREPUSH_OPS_TOKEN`): `GET /support/notifications/{id}` and
/// `GET /support/devices/{id}`, each a timeline with its explanation (docs/operations.md). A request without the
/// operations token is a 401, throttled like every other credential (a 429 with `Retry-After` after a few
/// failures from one address or from anywhere; the valid token is always served); an unknown id is a 200
/// whose explanation says so (the operator asked by id, so the answer may name the user). Never a payload,
/// preview, token or secret.
struct SupportRoutes: Sendable {
    let api: APIContext

    func notification(_ request: Request, context: APIRequestContext) async throws -> Response {
        try await authorize(request, context: context)
        let id = try Self.id(context, what: "notification")
        let timeline = try await api.database { try await Self.store($0).notification(id) }
        return try JSONResponse.make(timeline)
    }

    func device(_ request: Request, context: APIRequestContext) async throws -> Response {
        try await authorize(request, context: context)
        let id = try Self.id(context, what: "device")
        let timeline = try await api.database { try await Self.store($0).device(id) }
        return try JSONResponse.make(timeline)
    }

    /// Refuses a request without `Authorization: Bearer <operations token>` (compared in constant time). A missing
    /// or wrong token is a failed attempt of the client's address and of the operations token itself (the key
    /// `ops`, so guessing from many addresses is throttled too): 401, then 429 while blocked. The valid token is
    /// never refused, so the throttle cannot lock the operator out (issue 47).
    func authorize(_ request: Request, context: APIRequestContext) async throws {
        let tokenRequired = APIError.unauthorized(
            "The support lookup needs the operations token: Authorization: Bearer <SECUREPUSH_OPS_TOKEN>.")
        guard let expected = api.opsToken else { throw tokenRequired }
        let header = request.headers[.authorization]
        if let header, header.hasPrefix("Bearer ") {
            let given = SHA256.hash(data: Data(header.dropFirst("Bearer ".count).utf8))
            let wanted = SHA256.hash(data: Data(expected.utf8))
            // Digests of equal length, compared without an early exit.
            if zip(given, wanted).reduce(UInt8(0), { $0 | ($1.0 ^ $1.1) }) == 0 { return }
        }
        let keys = AuthThrottle.keys(client: context.clientAddress(request, trustedProxies: api.limits.trustedProxies)) + ["ops"]
        let missing = header?.hasPrefix("Bearer ") != true
        try await AuthThrottle(api: api).reject(
            keys: keys, kind: missing ? "operations token missing" : "operations token invalid",
            unauthorized: missing ? tokenRequired : .unauthorized("The operations token is not valid."), logger: context.logger)
    }

    static func store(_ stores: APIStores) throws -> any SupportRepository {
        guard let support = stores.support else { throw APIError(.notFound, code: .notFound, message: "The support lookup is not served here.") }
        return support
    }

    static func id(_ context: APIRequestContext, what: String) throws -> UUID {
        guard let id = NotificationID(context.parameters.get("id") ?? "") else {
            throw APIError(.badRequest, code: .invalidID, message: "A \(what) id is a UUID such as 0f8fad5b-d9cb-469f-a165-70867728950e.")
        }
        return id.uuid
    }
}
