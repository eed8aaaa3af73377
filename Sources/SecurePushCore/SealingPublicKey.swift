import Foundation

/// A device's sealing key as the server holds it: an RFC 8291 recipient, the public half of a P-256 key the
/// device generated (65-byte uncompressed point) and a 16-byte auth secret. The private key never leaves
/// the device. Web Push devices have none: their subscription's `p256dh` and `auth` seal the whole message.
public struct SealingPublicKey: Sendable, Hashable {
    /// The uncompressed P-256 public key (`0x04 || X || Y`).
    public var publicKey: Data
    /// The auth secret.
    public var authSecret: Data

    /// The key, or `nil` when the sizes are wrong (the database's constraint keeps them right).
    public init?(publicKey: Data, authSecret: Data) {
        guard publicKey.count == 65, publicKey.first == 0x04, authSecret.count == 16 else { return nil }
        self.publicKey = publicKey
        self.authSecret = authSecret
    }
}
