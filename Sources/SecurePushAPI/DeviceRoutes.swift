import Foundation
import Hummingbird
import SecurePushStore

/// `POST /v1/devices` (user JWT) and `DELETE /v1/devices/current` (device credential).
struct DeviceRoutes: Sendable {
    let api: APIContext

    func register(_ request: Request, context: some RequestContext) async throws -> Response {
        guard let bearer = request.headers[.authorization].flatMap(BearerToken.parse) else {
            throw APIError.unauthorized("A user token is required: Authorization: Bearer <JWT>.")
        }
        let userID: String
        do {
            userID = try await api.userTokens.userID(from: bearer)
        } catch {
            throw APIError.unauthorized("The user token is invalid or expired.")
        }
        let body = try await request.body.collect(upTo: api.maxRequestBodyBytes)
        let input = try DeviceRegistrationInput(json: Data(buffer: body))
        do {
            let devices = api.devices
            let registration = try await api.database {
                try await devices.register(userID: userID, platform: input.platform, token: input.token, optionsJSON: input.optionsJSON)
            }
            return try JSONResponse.make(
                DeviceCreatedBody(deviceId: registration.deviceID.uuidString.lowercased(), deviceSecret: registration.deviceSecret),
                status: .created
            )
        } catch let error as InvalidInput {
            throw APIError(.badRequest, code: "invalid_device", message: error.message)
        }
    }

    func unregister(_ request: Request, context: some RequestContext) async throws -> Response {
        let device = try await DeviceAuthenticator(api: api).authenticate(request)
        let devices = api.devices
        try await api.database { try await devices.deactivate(deviceID: device.deviceID, reason: "unregistered by the device") }
        return Response(status: .noContent)
    }
}
