import Foundation

/// What a sealed push carries beyond the id (`SECUREPUSH_SEALED_PREVIEWS=on`, docs/security.md): the
/// producer-approved preview, if any, and the key it is sealed to. The envelope profiles seal it
/// (RFC 8291, padded to the platform's bucket) before anything reaches the wire; it is never logged.
public struct PushSeal: Sendable, Hashable {
    /// The preview as JSON text (an object of at most 1024 bytes), or `nil`: the push is sealed id-only,
    /// so it has the size of one with a preview.
    public var previewJSON: String?
    /// The device's sealing key; `nil` for Web Push, whose message is encrypted to the subscription.
    public var key: SealingPublicKey?
    /// A value already sealed by the self-hosted server, as a push relay receives it (docs/relay.md): the
    /// envelope carries it as it is (when it has the fixed length of a sealed value); the relay never sees
    /// the preview or the key.
    public var sealed: String?

    /// Creates a seal.
    public init(previewJSON: String?, key: SealingPublicKey?, sealed: String? = nil) {
        self.previewJSON = previewJSON
        self.key = key
        self.sealed = sealed
    }
}

extension PushSeal {
    /// The padded plaintext of an APNs, FCM or WNS sealed value, in bytes: the bucket every sealed value of
    /// those platforms fills, preview or not (docs/envelopes.md, "Sealed previews").
    public static let bucket = 1024

    /// The bytes the id and the member around a preview add to it: `{"id":"<36-character id>","preview":` and `}`.
    static let framing = #"{"id":"","preview":}"#.utf8.count + 36

    /// Whether the preview travels: there is one and it fits `bucket` with the id (else it stays home and
    /// the device fetches).
    public var previewFits: Bool {
        previewJSON.map { $0.utf8.count + Self.framing <= Self.bucket } ?? false
    }

    /// What is sealed for notification `id`: `{"id":"<id>","preview":{...}}` when `previewFits`, else
    /// `{"id":"<id>"}`.
    public func plaintext(for id: NotificationID) -> Data {
        let head = #"{"id":"\#(id.description)""#
        guard previewFits, let previewJSON else { return Data((head + "}").utf8) }
        return Data((head + #","preview":\#(previewJSON)}"#).utf8)
    }
}
