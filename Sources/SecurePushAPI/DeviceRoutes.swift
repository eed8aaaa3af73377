import CoreMetrics
import Foundation
import Hummingbird
import Logging
import SecurePushCore
import SecurePushStore

/// `POST /v1/devices` (user JWT), `DELETE /v1/devices/current`, `POST /v1/devices/current/rotate` and
/// `PUT /v1/devices/current/token` (device credential).
struct DeviceRoutes: Sendable {
    let api: APIContext

    func register(_ request: Request, context: APIRequestContext) async throws -> Response {
        let userID = try context.requireUser()
        let input = try DeviceRegistrationInput(json: try await RequestBody.read(request, limits: api.limits))
        try checkEndpoint(input)
        do {
            let registration = try await refusingInvalidDevice {
                try await api.database {
                    try await $0.devices.register(
                        userID: userID, platform: input.platform, token: input.token, optionsJSON: input.optionsJSON ?? "{}",
                        sealingKey: input.sealingKey)
                }
            }
            if registration.reboundFrom != nil {
                // The previous owner is in the audit row (`device_rebound`), never in a log line or a metric.
                context.logger.notice("push token re-bound to another user", metadata: ["device.id": "\(registration.deviceID)"])
                api.rebinds.increment()
            }
            return try JSONResponse.make(
                DeviceCreatedBody(registration),
                status: .created
            )
        } catch let error as HourlyLimitReached {
            try await api.database { try await $0.security.audit(.registrationLimited, userID: userID, deviceID: nil, reason: input.platform) }
            throw APIError.tooManyRequests(retryAfter: error.retryAfter, "Too many device registrations for this user; retry later.")
        }
    }

    /// `PUT /v1/devices/current/token`: the calling device's new push token or Web Push subscription (a
    /// token refresh, `pushsubscriptionchange`), checked as registration checks it, with the device
    /// credential alone. Its id and secret stay; waiting pushes go to the new address. A device that held
    /// the token before is retired, as registration re-binds a token.
    func updateToken(_ request: Request, context: APIRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let body = try await RequestBody.read(request, limits: api.limits)
        guard
            let platform = try await api.database({ try await $0.devices.platform(deviceID: device.deviceID) }).flatMap(Platform.init(rawValue:))
        else {
            throw APIError.deviceCredentialInvalid
        }
        let input = try DeviceRegistrationInput(json: body, platform: platform)
        try checkEndpoint(input)
        do {
            guard
                let update = try await refusingInvalidDevice({
                    try await api.database {
                        try await $0.devices.updateToken(deviceID: device.deviceID, token: input.token, optionsJSON: input.optionsJSON)
                    }
                })
            else {
                throw APIError.deviceCredentialInvalid
            }
            if update.rebound {
                context.logger.notice("push token re-bound to another user", metadata: ["device.id": "\(device.deviceID)"])
                api.rebinds.increment()
            }
        } catch let error as HourlyLimitReached {
            throw APIError.tooManyRequests(retryAfter: error.retryAfter, "Too many push address changes for this user; retry later.")
        }
        return Response(status: .noContent)
    }

    /// Refuses a Web Push endpoint or WNS channel URI the dispatcher would never send to: not https, a
    /// host not on the allowlist, or a non-public IP literal (server-side request forgery). No DNS lookup.
    func checkEndpoint(_ input: DeviceRegistrationInput) throws {
        guard let platform = Platform(rawValue: input.platform), let policy = api.endpointPolicies.policy(for: platform) else { return }
        do {
            _ = try policy.check(input.token)
        } catch {
            let label = PushEndpointPolicies.label(for: platform)
            throw APIError.invalidDevice("The \(label) is refused: \(error.reason).")
        }
    }

    /// Runs a device statement: the database's refusal of the device (`InvalidInput`, its sentence) is
    /// `400 invalid_device`.
    private func refusingInvalidDevice<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as InvalidInput {
            throw APIError.invalidDevice(error.message)
        }
    }

    /// `refusingInvalidDevice` for the sealing-key changes (setting, clearing, rotating with a key): over the
    /// device's hourly number of key changes, `429` with `Retry-After`.
    private func changingSealingKey<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await refusingInvalidDevice(body)
        } catch let error as HourlyLimitReached {
            throw APIError.tooManyRequests(retryAfter: error.retryAfter, "Too many sealing key changes for this device; retry later.")
        }
    }

    func unregister(_ request: Request, context: APIRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        try await api.database {
            try await $0.devices.deactivate(deviceID: device.deviceID, reason: "unregistered by the device")
            try await $0.security.audit(.deviceRevoked, userID: device.userID, deviceID: device.deviceID, reason: "unregistered by the device")
        }
        return Response(status: .noContent)
    }

    /// `POST /v1/devices/current/rotate`: a new secret for this device; the old one stops working at once. The
    /// sealing key rotates with it: replaced by the body's `sealing_key`, dropped without one.
    func rotate(_ request: Request, context: APIRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let sealingKey = try SealingKeyInput.parse(rotation: try await RequestBody.read(request, limits: api.limits))
        let rotated = try await changingSealingKey {
            try await api.database { try await $0.devices.rotate(deviceID: device.deviceID, sealingKey: sealingKey) }
        }
        guard let rotated else { throw APIError.deviceCredentialInvalid }
        return try JSONResponse.make(DeviceCreatedBody(rotated))
    }

    /// `PUT /v1/devices/current/sealing-key` (`{"p256dh", "auth"}`) sets this device's sealing key; `DELETE`
    /// drops it (id-only pushes). Both 204. Web Push devices have none (`400`): their subscription seals.
    func setSealingKey(_ request: Request, context: APIRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let key = try SealingKeyInput.parse(body: try await RequestBody.read(request, limits: api.limits))
        return try await storeSealingKey(key, device: device.deviceID)
    }

    /// `DELETE /v1/devices/current/sealing-key`.
    func clearSealingKey(_ request: Request, context: APIRequestContext) async throws -> Response {
        try await storeSealingKey(nil, device: try context.requireDevice().deviceID)
    }

    private func storeSealingKey(_ key: SealingPublicKey?, device: UUID) async throws -> Response {
        let stored = try await changingSealingKey {
            try await api.database { try await $0.devices.setSealingKey(deviceID: device, key) }
        }
        guard stored else { throw APIError.deviceCredentialInvalid }
        return Response(status: .noContent)
    }
}
