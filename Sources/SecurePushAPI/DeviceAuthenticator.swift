import Foundation
import Hummingbird
import SecurePushStore

/// Checks `Authorization: Bearer <device_id>.<device_secret>`; every failure is the same 401.
struct DeviceAuthenticator: Sendable {
    let api: APIContext

    func authenticate(_ request: Request) async throws -> AuthenticatedDevice {
        guard let credential = DeviceCredential(authorization: request.headers[.authorization]) else {
            throw APIError.unauthorized("A device credential is required: Authorization: Bearer <device_id>.<device_secret>.")
        }
        let devices = api.devices
        guard let device = try await api.database({ try await devices.authenticate(deviceID: credential.deviceID, secret: credential.secret) }) else {
            throw APIError.unauthorized("The device credential is invalid or revoked.")
        }
        _ = try? await api.database { try await devices.touch(deviceID: device.deviceID) }
        return device
    }
}
