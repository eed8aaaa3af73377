import Foundation

/// A device's credential: its id and the secret the server showed once at registration.
/// The server keeps only a hash of the secret; keep it in a `CredentialStore` (the Keychain on Apple platforms).
public struct DeviceCredential: Sendable, Hashable, Codable {
    /// The device's id.
    public var deviceID: UUID
    /// The secret (43 base64url characters).
    public var secret: String
    /// The key sealed previews are sealed to (`nil`: a Web Push device, or one that has not set a key; its
    /// pushes are id-only). Credentials stored before sealed previews decode without it.
    public var sealingKey: SealingKey?

    /// Creates a credential.
    public init(deviceID: UUID, secret: String, sealingKey: SealingKey? = nil) {
        self.deviceID = deviceID
        self.secret = secret
        self.sealingKey = sealingKey
    }

    /// The `Authorization: Bearer` value: `<device id>.<secret>`.
    var bearer: String { "\(deviceID.uuidString.lowercased()).\(secret)" }
}
