import Foundation

#if canImport(CryptoKit)
    import CryptoKit
#else
    import Crypto
#endif

/// A sealed push's record: `{"id", "preview"}` encrypted to the device's `SealingKey` with RFC 8291
/// (`aes128gcm`, one RFC 8188 record, padded to a fixed size). Open it with `open(with:)`, or with
/// `SecurePushClient.openSealed(_:)` and the stored key.
public struct SealedPush: Sendable, Hashable {
    /// The push's clear id: what is inside must name the same notification.
    public var id: UUID
    /// The record as pushed: salt(16) | rs(4) | idlen(1) | sender public key(65) | ciphertext and tag.
    public var record: Data

    /// A record as it was pushed, unchecked (`open(with:)` checks everything).
    public init(id: UUID, record: Data) {
        self.id = id
        self.record = record
    }

    /// The `secureSealed` value of a push (unpadded base64url); `nil` when it is not a record's shape.
    public init?(id: UUID, base64URL text: String) {
        guard let record = Data(base64URLEncoded: text), Header(record) != nil else { return nil }
        self.init(id: id, record: record)
    }

    /// Decrypts the record with `key`, strips its padding and checks that it names this push's id.
    /// Throws `SealedPushError`, never traps, whatever the record holds.
    public func open(with key: SealingKey) throws(SealedPushError) -> SealedPreview {
        guard let header = Header(record) else { throw .malformedRecord }
        let padded: Data
        do {
            let senderKey = try P256.KeyAgreement.PublicKey(x963Representation: header.senderPublicKey)
            let shared = try key.agreementKey.sharedSecretFromKeyAgreement(with: senderKey)
            // IKM = HKDF(salt: auth, ikm: ECDH secret, info: "WebPush: info" 0x00 || ua_public || as_public, L: 32)
            var keyInfo = Data("WebPush: info\0".utf8)
            keyInfo.append(key.publicKey)
            keyInfo.append(header.senderPublicKey)
            let ikm = shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: key.auth, sharedInfo: keyInfo, outputByteCount: 32)
            let cek = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: ikm, salt: header.salt, info: Data("Content-Encoding: aes128gcm\0".utf8), outputByteCount: 16)
            let nonce = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: ikm, salt: header.salt, info: Data("Content-Encoding: nonce\0".utf8), outputByteCount: 12)
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: nonce.withUnsafeBytes { Data($0) }),
                ciphertext: header.ciphertext.dropLast(16), tag: header.ciphertext.suffix(16))
            padded = try AES.GCM.open(box, using: cek)
        } catch {
            throw .cannotDecrypt
        }
        // RFC 8188 padding: content || 0x02 (the last record's delimiter) || 0x00...
        guard let delimiter = padded.lastIndex(where: { $0 != 0 }), padded[delimiter] == 0x02 else { throw .malformedContent }
        return try SealedPreview(id: id, content: Data(padded[padded.startIndex..<delimiter]))
    }

    /// The RFC 8188 header of a record with one record of content (the sender's public key as key id).
    struct Header {
        var salt: Data
        var senderPublicKey: Data
        /// The ciphertext and the 16-byte tag.
        var ciphertext: Data

        init?(_ record: Data) {
            let bytes = [UInt8](record)
            // salt(16) | rs(4) | idlen(1) = 65 | key id(65) | at least the delimiter's ciphertext and the tag
            guard bytes.count >= 86 + 17, bytes[20] == 65 else { return nil }
            let recordSize = bytes[16..<20].reduce(0) { $0 << 8 | Int($1) }
            // One record only: the content after the header fits in the record size.
            guard recordSize >= 18, bytes.count - 86 <= recordSize else { return nil }
            salt = Data(bytes[0..<16])
            senderPublicKey = Data(bytes[21..<86])
            ciphertext = Data(bytes[86...])
        }
    }
}

/// Why a sealed push could not be opened. The push's id is still good: fetch the notification as usual.
public enum SealedPushError: Error, Sendable, Hashable {
    /// The message is not a sealed push.
    case notSealed
    /// No sealing key is stored (no credential, or a device registered before sealed previews or after
    /// `clearSealingKey()`).
    case noSealingKey
    /// The record is not an `aes128gcm` record of one record with the sender's key as key id.
    case malformedRecord
    /// The record was not sealed to this key, or was altered.
    case cannotDecrypt
    /// The decrypted content is not padded JSON of the documented shape.
    case malformedContent
    /// The content names another notification than the push's id.
    case idMismatch
}
