import Crypto
import Foundation

/// RFC 8291 message encryption with the RFC 8188 `aes128gcm` content coding: one record whose header
/// carries the salt, the record size and the sender's ephemeral P-256 public key. It encrypts Web Push
/// messages to subscriptions and sealed previews to devices' sealing keys (`PreviewSealer`).
package enum WebPushEncryption {
    /// The record size written in the header.
    package static let recordSize: UInt32 = 4096

    /// The bytes a record adds to its padded plaintext: salt (16), record size (4), key length (1), the
    /// sender's key (65), the delimiter (1) and the tag (16).
    package static let overhead = 103

    /// Encrypts `plaintext` for a subscription's `p256dh` key (65-byte uncompressed point) and 16-byte `auth` secret.
    /// With `paddedTo`, the plaintext is padded (RFC 8188: the delimiter, then zeros) so the record is always
    /// `paddedTo + overhead` bytes, whatever the plaintext's length; a longer plaintext throws `tooLarge`.
    package static func encrypt(
        _ plaintext: Data,
        userAgentPublicKey: Data,
        authSecret: Data,
        senderKey: P256.KeyAgreement.PrivateKey = P256.KeyAgreement.PrivateKey(),
        salt: Data? = nil,
        paddedTo: Int? = nil
    ) throws -> Data {
        guard userAgentPublicKey.count == 65, userAgentPublicKey.first == 0x04 else { throw WebPushEncryptionError.badPublicKey }
        guard authSecret.count == 16 else { throw WebPushEncryptionError.badAuthSecret }
        if let paddedTo, plaintext.count > paddedTo { throw WebPushEncryptionError.tooLarge }
        let salt = salt ?? Data((0..<16).map { _ in UInt8.random(in: 0...255) })
        let userAgentKey: P256.KeyAgreement.PublicKey
        do {
            userAgentKey = try P256.KeyAgreement.PublicKey(x963Representation: userAgentPublicKey)
        } catch {
            throw WebPushEncryptionError.badPublicKey
        }
        let senderPublic = senderKey.publicKey.x963Representation
        let shared = try senderKey.sharedSecretFromKeyAgreement(with: userAgentKey)

        // IKM = HKDF(salt: auth_secret, ikm: ecdh_secret, info: "WebPush: info" 0x00 ua_public as_public, L: 32)
        var keyInfo = Data("WebPush: info".utf8)
        keyInfo.append(0)
        keyInfo.append(userAgentPublicKey)
        keyInfo.append(senderPublic)
        let ikm = shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: authSecret, sharedInfo: keyInfo, outputByteCount: 32)

        let cek = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: Data("Content-Encoding: aes128gcm\0".utf8), outputByteCount: 16)
        let nonce = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: Data("Content-Encoding: nonce\0".utf8), outputByteCount: 12)

        var padded = plaintext
        padded.append(0x02)  // delimiter of the last (only) record, then the padding
        if let paddedTo { padded.append(contentsOf: repeatElement(0, count: paddedTo - plaintext.count)) }
        let sealed = try AES.GCM.seal(padded, using: cek, nonce: try AES.GCM.Nonce(data: nonce.withUnsafeBytes { Data($0) }))

        var body = salt
        withUnsafeBytes(of: recordSize.bigEndian) { body.append(contentsOf: $0) }
        body.append(UInt8(senderPublic.count))
        body.append(senderPublic)
        body.append(sealed.ciphertext)
        body.append(sealed.tag)
        return body
    }
}

/// The subscription's keys cannot be used for encryption.
package enum WebPushEncryptionError: Error {
    case badPublicKey
    case badAuthSecret
    /// The plaintext is longer than the padded length asked for.
    case tooLarge
}
