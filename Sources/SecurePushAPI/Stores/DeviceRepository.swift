import Foundation
import SecurePushCore
import SecurePushStore

/// The devices the API registers, authenticates and changes: the seam between the HTTP handlers and
/// `DeviceStore` (SQL), so that a handler's HTTP behaviour can be tested without a database. The
/// requirements are `DeviceStore`'s methods; see them for what each does and throws.
public protocol DeviceRepository: Sendable {
    /// Registers or re-registers a device (`DeviceStore.register`).
    func register(userID: String, platform: String, token: String, optionsJSON: String, sealingKey: SealingPublicKey?) async throws
        -> DeviceRegistration
    /// Checks a device credential and the throttle keys' blocks (`DeviceStore.authenticate`).
    func authenticate(_ proof: DeviceProof) async throws -> DeviceAccess<Void>
    /// Gives an active device a new secret (`DeviceStore.rotate`); `nil` when it is not active.
    func rotate(deviceID: UUID, sealingKey: SealingPublicKey?) async throws -> DeviceRegistration?
    /// Sets or drops an active device's sealing key (`DeviceStore.setSealingKey`); `false` when it is not active.
    func setSealingKey(deviceID: UUID, _ sealingKey: SealingPublicKey?) async throws -> Bool
    /// The platform of an active device, or `nil`.
    func platform(deviceID: UUID) async throws -> String?
    /// Changes an active device's push token (`DeviceStore.updateToken`); `nil` when it is not active.
    func updateToken(deviceID: UUID, token: String, optionsJSON: String?) async throws -> TokenUpdate?
    /// Deactivates the device and cancels its pending deliveries.
    func deactivate(deviceID: UUID, reason: String) async throws
}

extension DeviceStore: DeviceRepository {}
