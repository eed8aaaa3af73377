import Foundation
import Hummingbird
import SecurePushStore

/// Route-group middleware: checks the app's user JWT (`Authorization: Bearer <JWT>`) and puts the user id
/// in the context. A valid token is served whatever the throttle says; a missing or invalid one is a
/// failed attempt, throttled per client address like device credentials (429 while the address is blocked).
struct UserAuthenticationMiddleware: RouterMiddleware {
    let api: APIContext

    func handle(_ request: Request, context: APIRequestContext, next: (Request, APIRequestContext) async throws -> Response) async throws
        -> Response
    {
        let bearer = request.headers[.authorization].flatMap(BearerToken.parse)
        if let bearer, let userID = try? await api.userTokens.userID(from: bearer) {
            var context = context
            context.userID = userID
            return try await next(request, context)
        }
        let keys = AuthThrottle.keys(client: context.clientAddress(request, trustedProxies: api.limits.trustedProxies))
        try await AuthThrottle(api: api).reject(
            keys: keys, kind: bearer == nil ? "user token missing" : "user token invalid",
            unauthorized: bearer == nil
                ? .unauthorized("A user token is required: Authorization: Bearer <JWT>.")
                : .unauthorized("The user token is invalid or expired."),
            logger: context.logger)
    }
}
