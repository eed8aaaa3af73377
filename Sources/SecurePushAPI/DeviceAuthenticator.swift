import Foundation
import Hummingbird
import SecurePushStore

/// Route-group middleware: checks `Authorization: Bearer <device_id>.<device_secret>` and puts the device
/// in the context. Every failure is the same 401.
struct DeviceAuthenticationMiddleware: RouterMiddleware {
    let api: APIContext

    func handle(_ request: Request, context: APIRequestContext, next: (Request, APIRequestContext) async throws -> Response) async throws
        -> Response
    {
        guard let credential = DeviceCredential(authorization: request.headers[.authorization]) else {
            throw APIError.unauthorized("A device credential is required: Authorization: Bearer <device_id>.<device_secret>.")
        }
        guard let device = try await api.database({ try await $0.devices.authenticate(deviceID: credential.deviceID, secret: credential.secret) })
        else {
            throw APIError.unauthorized("The device credential is invalid or revoked.")
        }
        _ = try? await api.database { try await $0.devices.touch(deviceID: device.deviceID) }
        var context = context
        context.device = device
        return try await next(request, context)
    }
}

/// Route-group middleware: checks the app's user JWT (`Authorization: Bearer <JWT>`) and puts the user id
/// in the context.
struct UserAuthenticationMiddleware: RouterMiddleware {
    let api: APIContext

    func handle(_ request: Request, context: APIRequestContext, next: (Request, APIRequestContext) async throws -> Response) async throws
        -> Response
    {
        guard let bearer = request.headers[.authorization].flatMap(BearerToken.parse) else {
            throw APIError.unauthorized("A user token is required: Authorization: Bearer <JWT>.")
        }
        var context = context
        do {
            context.userID = try await api.userTokens.userID(from: bearer)
        } catch {
            throw APIError.unauthorized("The user token is invalid or expired.")
        }
        return try await next(request, context)
    }
}
