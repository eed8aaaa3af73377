import Crypto
import Foundation

/// The user agent's side of RFC 8291: decrypts an `aes128gcm` body with the subscription's
/// private key and auth secret. Written from the RFC, independently of the provider's encryptor.
public struct WebPushDecryptor: Sendable {
    /// What went wrong while decrypting.
    public enum Failure: Error, Equatable {
        case truncated
        case badKeyID
        case badRecordSize
        case authenticationFailed
        case badPadding
    }

    /// The subscription's ECDH key pair.
    public let privateKey: P256.KeyAgreement.PrivateKey
    /// The 16-byte auth secret.
    public let authSecret: Data

    /// A new subscription key pair and auth secret.
    public init() {
        self.privateKey = P256.KeyAgreement.PrivateKey()
        self.authSecret = Data((0..<16).map { _ in UInt8.random(in: 0...255) })
    }

    /// `p256dh` as a subscription reports it (base64url of the uncompressed point).
    public var p256dh: String { privateKey.publicKey.x963Representation.fakeBase64URL }
    /// `auth` as a subscription reports it.
    public var auth: String { authSecret.fakeBase64URL }

    /// Decrypts a body; returns the plaintext without padding.
    public func decrypt(_ body: Data) throws -> Data {
        let bytes = [UInt8](body)
        guard bytes.count >= 21 else { throw Failure.truncated }
        let salt = Data(bytes[0..<16])
        let recordSize = bytes[16..<20].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let idLength = Int(bytes[20])
        guard idLength == 65, bytes.count >= 21 + idLength + 16 else { throw Failure.badKeyID }
        let senderPublic = Data(bytes[21..<(21 + idLength)])
        let ciphertext = Data(bytes[(21 + idLength)...])
        guard recordSize >= 18, ciphertext.count <= Int(recordSize) else { throw Failure.badRecordSize }

        let senderKey: P256.KeyAgreement.PublicKey
        do { senderKey = try P256.KeyAgreement.PublicKey(x963Representation: senderPublic) } catch { throw Failure.badKeyID }
        let ecdh = try privateKey.sharedSecretFromKeyAgreement(with: senderKey)
        let ecdhBytes = ecdh.withUnsafeBytes { Data($0) }

        // PRK_key = HMAC(auth, ecdh); IKM = HMAC(PRK_key, key_info || 0x01)
        let prkKey = HMAC<SHA256>.authenticationCode(for: ecdhBytes, using: SymmetricKey(data: authSecret))
        var keyInfo = Data("WebPush: info".utf8) + [0] + privateKey.publicKey.x963Representation + senderPublic
        keyInfo.append(1)
        let ikm = HMAC<SHA256>.authenticationCode(for: keyInfo, using: SymmetricKey(data: Data(prkKey)))
        // PRK = HMAC(salt, IKM); CEK = first 16 of HMAC(PRK, cek_info || 0x01); NONCE = first 12 of HMAC(PRK, nonce_info || 0x01)
        let prk = HMAC<SHA256>.authenticationCode(for: Data(ikm), using: SymmetricKey(data: salt))
        let cek = Data(HMAC<SHA256>.authenticationCode(for: Data("Content-Encoding: aes128gcm\0".utf8) + [1], using: SymmetricKey(data: Data(prk))))
            .prefix(16)
        let nonce = Data(HMAC<SHA256>.authenticationCode(for: Data("Content-Encoding: nonce\0".utf8) + [1], using: SymmetricKey(data: Data(prk))))
            .prefix(12)

        let padded: Data
        do {
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: ciphertext.dropLast(16), tag: ciphertext.suffix(16))
            padded = try AES.GCM.open(box, using: SymmetricKey(data: cek))
        } catch {
            throw Failure.authenticationFailed
        }
        // Strip zero padding, then the last-record delimiter 0x02.
        guard let last = padded.lastIndex(where: { $0 != 0 }), padded[last] == 0x02 else { throw Failure.badPadding }
        return Data(padded[padded.startIndex..<last])
    }
}
