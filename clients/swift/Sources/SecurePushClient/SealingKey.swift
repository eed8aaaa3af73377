import Foundation

#if canImport(CryptoKit)
    import CryptoKit
#else
    import Crypto
#endif

/// The device's key for sealed previews: a P-256 key agreement private key and a 16-byte auth secret, as
/// RFC 8291 (Web Push encryption) uses them. The server knows only the public key and the auth secret and
/// seals each preview to them; the private key never leaves the device.
///
/// `SecurePushClient` creates one at registration and keeps it with the credential (`DeviceCredential.sealingKey`),
/// so a `CredentialStore` shared with a Notification Service Extension shares the key too.
public struct SealingKey: Sendable, Hashable, Codable {
    /// The private key's raw scalar (32 bytes).
    let privateKey: Data
    /// The auth secret (16 bytes).
    let auth: Data
    /// The public key as an uncompressed point (65 bytes), derived from `privateKey`.
    let publicKey: Data

    /// A key from its raw parts; `nil` unless `privateKey` is a valid 32-byte P-256 scalar and `auth` 16 bytes.
    init?(privateKey: Data, auth: Data) {
        guard auth.count == 16, privateKey.count == 32,
            let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: privateKey)
        else { return nil }
        self.privateKey = privateKey
        self.auth = auth
        self.publicKey = key.publicKey.x963Representation
    }

    /// A new random key and auth secret.
    public static func generate() -> SealingKey {
        let key = P256.KeyAgreement.PrivateKey()
        var generator = SystemRandomNumberGenerator()
        let auth = Data((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
        return SealingKey(privateKey: key.rawRepresentation, auth: auth)!
    }

    /// The public key (65-byte uncompressed P-256 point) in unpadded base64url: the `p256dh` the server seals to.
    public var publicKeyBase64URL: String { publicKey.base64URLEncodedString }

    /// The 16-byte auth secret in unpadded base64url: the `auth` the server seals with.
    public var authBase64URL: String { auth.base64URLEncodedString }

    /// The key agreement private key.
    var agreementKey: P256.KeyAgreement.PrivateKey {
        // `init?(privateKey:auth:)` checked that the scalar is valid.
        try! P256.KeyAgreement.PrivateKey(rawRepresentation: privateKey)
    }

    /// The API's `sealing_key` object: `{"p256dh": ..., "auth": ...}`.
    var json: JSONValue {
        .object(["p256dh": .string(publicKeyBase64URL), "auth": .string(authBase64URL)])
    }

    enum CodingKeys: String, CodingKey {
        case privateKey, auth
    }

    /// Decodes `{"privateKey": "<base64url>", "auth": "<base64url>"}`, checking both parts.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let privateKey = Data(base64URLEncoded: try container.decode(String.self, forKey: .privateKey))
        let auth = Data(base64URLEncoded: try container.decode(String.self, forKey: .auth))
        guard let privateKey, let auth, let key = SealingKey(privateKey: privateKey, auth: auth) else {
            throw DecodingError.dataCorruptedError(
                forKey: .privateKey, in: container, debugDescription: "not a P-256 private key and a 16-byte auth secret")
        }
        self = key
    }

    /// Encodes the private key and the auth secret as unpadded base64url strings (the public key is derived).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(privateKey.base64URLEncodedString, forKey: .privateKey)
        try container.encode(auth.base64URLEncodedString, forKey: .auth)
    }
}

extension Data {
    /// Unpadded base64url (RFC 4648 §5).
    var base64URLEncodedString: String {
        base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes unpadded (or padded) base64url; `nil` for anything else.
    init?(base64URLEncoded text: String) {
        guard !text.contains("+"), !text.contains("/") else { return nil }
        var value = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while value.hasSuffix("=") { value.removeLast() }
        switch value.count % 4 {
        case 1: return nil
        case 0: break
        default: value += String(repeating: "=", count: 4 - value.count % 4)
        }
        self.init(base64Encoded: value)
    }
}
