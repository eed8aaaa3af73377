import Crypto
import Foundation
import PostgresNIO

/// A device credential as the database checks it: the device id, the SHA-256 digest of the presented
/// secret (never the secret itself) and the failed-authentication throttle keys of the request.
public struct DeviceProof: Sendable {
    /// The device id the request claims.
    public var deviceID: UUID
    /// SHA-256 of the presented secret; compared with the stored digest inside the database.
    public var secretHash: [UInt8]
    /// The throttle keys (client address, device id) whose blocks refuse the request.
    public var throttleKeys: [String]

    /// Hashes the presented secret.
    public init(deviceID: UUID, secret: [UInt8], throttleKeys: [String]) {
        self.deviceID = deviceID
        self.secretHash = [UInt8](SHA256.hash(data: secret))
        self.throttleKeys = throttleKeys
    }

    var secretHashBuffer: ByteBuffer { ByteBuffer(bytes: secretHash) }
}

/// What a device request got in its one round trip: refused, or the device and the request's result.
public enum DeviceAccess<Value: Sendable>: Sendable {
    /// The credential is unknown, wrong or deactivated (`blockedFor` 0), or a throttle key is blocked for
    /// `blockedFor` seconds; nothing was read.
    case refused(blockedFor: Double)
    /// The credential is valid: the device, and what the request read.
    case granted(AuthenticatedDevice, Value)
}

/// The session each device function (`device_check`, `device_list_page`, `device_fetch_requests`) returns as
/// the columns `user_id` and `blocked_for` of its rows: the device's user when the credential is valid, else
/// the seconds a throttle key is still blocked (none: refused without a block). The one home of that
/// convention.
struct DeviceSessionRow: Sendable {
    /// The device's user; `nil` when the credential was refused.
    var userID: String?
    /// Seconds a throttle key is still blocked, when one is.
    var blockedFor: Double?

    /// No session row came back: refused, no block.
    static let missing = DeviceSessionRow(userID: nil, blockedFor: nil)

    /// What the request got: refused, or the device with `value` (the rows read after this one).
    func access<Value>(deviceID: UUID, _ value: @autoclosure () -> Value) -> DeviceAccess<Value> {
        guard let userID else { return .refused(blockedFor: blockedFor ?? 0) }
        return .granted(AuthenticatedDevice(deviceID: deviceID, userID: userID), value())
    }
}
