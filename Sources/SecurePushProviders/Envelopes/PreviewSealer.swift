import Foundation
import SecurePushCore

/// Seals a push's id and preview to the device's sealing key for APNs, FCM and WNS (docs/security.md): the
/// plaintext `{"id":"<id>","preview":{...}}` (or `{"id":"<id>"}` without a preview, or with one that does not
/// fit: `PushSeal.plaintext(for:)`), RFC 8291 `aes128gcm` padded to `PushSeal.bucket` bytes, base64url. Every sealed value is therefore
/// `sealedLength` characters, preview or not; only the device's private key opens it.
enum PreviewSealer {
    /// The length of every sealed value: base64url (no padding) of `PushSeal.bucket + overhead` bytes.
    static let sealedLength = ((PushSeal.bucket + WebPushEncryption.overhead) * 4 + 2) / 3

    /// The sealed value of `push`, or `nil` when it is not sealed (no seal, no key, a clear) or the key is
    /// not a point on the curve (the push stays id-only).
    ///
    /// A value sealed upstream (a relayed push, `PushSeal.sealed`) is carried as it is when it has the length
    /// of every sealed value; otherwise the push stays id-only.
    static func sealed(_ push: Push) -> String? {
        guard case .notify = push.kind, let seal = push.seal else { return nil }
        if let sealed = seal.sealed {
            return sealed.utf8.count == sealedLength && sealed.utf8.allSatisfy(Self.isBase64URL) ? sealed : nil
        }
        guard let key = seal.key else { return nil }
        let plaintext = seal.plaintext(for: push.notificationID)
        let record = try? WebPushEncryption.encrypt(
            plaintext, userAgentPublicKey: key.publicKey, authSecret: key.authSecret, paddedTo: PushSeal.bucket)
        return record?.base64URLEncodedString
    }

    static func isBase64URL(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2D || byte == 0x5F
    }
}
