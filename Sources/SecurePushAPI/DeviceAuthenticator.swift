import Foundation
import Hummingbird
import SecurePushStore

/// Route-group middleware: checks `Authorization: Bearer <device_id>.<device_secret>` and puts the device
/// in the context. Every failure is the same 401 (429 once the client or device is throttled); reads are
/// rate-limited per device and per user.
struct DeviceAuthenticationMiddleware: RouterMiddleware {
    let api: APIContext
    let deviceReads: RateLimiter
    let userReads: RateLimiter

    init(api: APIContext) {
        self.api = api
        self.deviceReads = RateLimiter(api.limits.deviceReads)
        self.userReads = RateLimiter(api.limits.userReads)
    }

    func handle(_ request: Request, context: APIRequestContext, next: (Request, APIRequestContext) async throws -> Response) async throws
        -> Response
    {
        let throttle = AuthThrottle(api: api)
        let client = context.clientAddress(request, trustedProxies: api.limits.trustedProxies)
        guard let credential = DeviceCredential(authorization: request.headers[.authorization]) else {
            let keys = AuthThrottle.keys(client: client)
            try throttle.refuseIfBlocked(try await api.database { try await $0.security.blockedFor(keys) })
            try await throttle.fail(
                keys: keys, deviceID: nil, kind: "device credential missing or malformed",
                unauthorized: .unauthorized("A device credential is required: Authorization: Bearer <device_id>.<device_secret>."),
                logger: context.logger)
        }
        let keys = AuthThrottle.keys(client: client, deviceID: credential.deviceID)
        let (device, blockedFor) = try await api.database {
            try await $0.devices.authenticate(deviceID: credential.deviceID, secret: credential.secret, throttleKeys: keys)
        }
        try throttle.refuseIfBlocked(blockedFor)
        guard let device else {
            try await throttle.fail(
                keys: keys, deviceID: credential.deviceID, kind: "device credential invalid",
                unauthorized: .unauthorized("The device credential is invalid or revoked."), logger: context.logger)
        }
        if let wait = deviceReads.take(device.deviceID.uuidString) ?? userReads.take(device.userID) {
            throw APIError.tooManyRequests(retryAfter: wait.secondsDouble, "Too many requests for this device or user; slow down.")
        }
        _ = try? await api.database { try await $0.devices.touch(deviceID: device.deviceID) }
        var context = context
        context.device = device
        return try await next(request, context)
    }
}

/// Route-group middleware: checks the app's user JWT (`Authorization: Bearer <JWT>`) and puts the user id
/// in the context; failures are throttled per client address like device credentials.
struct UserAuthenticationMiddleware: RouterMiddleware {
    let api: APIContext

    func handle(_ request: Request, context: APIRequestContext, next: (Request, APIRequestContext) async throws -> Response) async throws
        -> Response
    {
        let throttle = AuthThrottle(api: api)
        let keys = AuthThrottle.keys(client: context.clientAddress(request, trustedProxies: api.limits.trustedProxies))
        try throttle.refuseIfBlocked(try await api.database { try await $0.security.blockedFor(keys) })
        guard let bearer = request.headers[.authorization].flatMap(BearerToken.parse) else {
            try await throttle.fail(
                keys: keys, deviceID: nil, kind: "user token missing",
                unauthorized: .unauthorized("A user token is required: Authorization: Bearer <JWT>."), logger: context.logger)
        }
        var context = context
        do {
            context.userID = try await api.userTokens.userID(from: bearer)
        } catch {
            try await throttle.fail(
                keys: keys, deviceID: nil, kind: "user token invalid", unauthorized: .unauthorized("The user token is invalid or expired."),
                logger: context.logger)
        }
        return try await next(request, context)
    }
}
