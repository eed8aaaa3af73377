import Foundation
import Hummingbird
import SecurePushCore
import SecurePushStore

/// `POST /v1/devices` (user JWT) and `DELETE /v1/devices/current` (device credential).
struct DeviceRoutes: Sendable {
    let api: APIContext

    func register(_ request: Request, context: APIRequestContext) async throws -> Response {
        let userID = try context.requireUser()
        let body = try await request.body.collect(upTo: api.maxRequestBodyBytes)
        let input = try DeviceRegistrationInput(json: Data(buffer: body))
        try checkEndpoint(input)
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

    /// Refuses a Web Push endpoint or WNS channel URI the dispatcher would never send to: not https, a
    /// host not on the allowlist, or a non-public IP literal (server-side request forgery). No DNS lookup.
    func checkEndpoint(_ input: DeviceRegistrationInput) throws {
        guard let platform = Platform(rawValue: input.platform), let policy = api.endpointPolicies.policy(for: platform) else { return }
        do {
            _ = try policy.check(input.token)
        } catch {
            let label = PushEndpointPolicies.label(for: platform)
            throw APIError(.badRequest, code: "invalid_device", message: "The \(label) is refused: \(error.reason).")
        }
    }

    func unregister(_ request: Request, context: APIRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        try await api.database { try await $0.devices.deactivate(deviceID: device.deviceID, reason: "unregistered by the device") }
        return Response(status: .noContent)
    }
}
