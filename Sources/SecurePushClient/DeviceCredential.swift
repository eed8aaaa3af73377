import Foundation

/// A device's credential: its id and the secret the server showed once at registration.
/// The server keeps only a hash of the secret; keep it in a `CredentialStore` (the Keychain on Apple platforms).
public struct DeviceCredential: Sendable, Hashable, Codable {
    /// The device's id.
    public var deviceID: UUID
    /// The secret (43 base64url characters).
    public var secret: String

    /// Creates a credential.
    public init(deviceID: UUID, secret: String) {
        self.deviceID = deviceID
        self.secret = secret
    }

    /// The `Authorization: Bearer` value: `<device id>.<secret>`.
    var bearer: String { "\(deviceID.uuidString.lowercased()).\(secret)" }
}
