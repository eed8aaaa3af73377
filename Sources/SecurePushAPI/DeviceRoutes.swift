import Foundation
import Hummingbird
import SecurePushStore

/// `POST /v1/devices` (user JWT) and `DELETE /v1/devices/current` (device credential).
struct DeviceRoutes: Sendable {
    let api: APIContext

    func register(_ request: Request, context: APIRequestContext) async throws -> Response {
        let userID = try context.requireUser()
        let body = try await request.body.collect(upTo: api.maxRequestBodyBytes)
        let input = try DeviceRegistrationInput(json: Data(buffer: body))
        do {
            let registration = try await api.database {
                try await $0.devices.register(userID: userID, platform: input.platform, token: input.token, optionsJSON: input.optionsJSON)
            }
            return try JSONResponse.make(
                DeviceCreatedBody(deviceId: registration.deviceID.uuidString.lowercased(), deviceSecret: registration.deviceSecret),
                status: .created
            )
        } catch let error as InvalidInput {
            throw APIError(.badRequest, code: "invalid_device", message: error.message)
        }
    }

    func unregister(_ request: Request, context: APIRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        try await api.database { try await $0.devices.deactivate(deviceID: device.deviceID, reason: "unregistered by the device") }
        return Response(status: .noContent)
    }
}
