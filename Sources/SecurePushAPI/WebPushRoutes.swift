import Hummingbird

/// `GET /v1/webpush/key`: the VAPID public key a browser subscribes with (`applicationServerKey`).
/// Public by nature, so unauthenticated; 404 `not_configured` when the server has no VAPID key.
struct WebPushRoutes: Sendable {
    let api: APIContext

    struct KeyBody: Encodable {
        /// The uncompressed P-256 point, base64url without padding.
        var publicKey: String
    }

    func key(_ request: Request, context: APIRequestContext) async throws -> Response {
        guard let key = api.webPushPublicKey else {
            throw APIError(.notFound, code: .notConfigured, message: "Web Push is not configured on this server (no VAPID key).")
        }
        var response = try JSONResponse.make(KeyBody(publicKey: key))
        response.headers[.cacheControl] = "public, max-age=3600"
        return response
    }
}
