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

    /// Creates a seal.
    public init(previewJSON: String?, key: SealingPublicKey?) {
        self.previewJSON = previewJSON
        self.key = key
    }
}

extension PushSeal {
    /// The padded plaintext of an APNs, FCM or WNS sealed value, in bytes: the bucket every sealed value of
    /// those platforms fills, preview or not (docs/envelopes.md, "Sealed previews").
    public static let bucket = 1024

    /// What is sealed for notification `id`: `{"id":"<id>","preview":{...}}` when that fits `bucket`, else
    /// `{"id":"<id>"}` (no preview, or one too large: it stays home and the device fetches).
    public func plaintext(for id: NotificationID) -> (data: Data, includesPreview: Bool) {
        let head = #"{"id":"\#(id.description)""#
        if let previewJSON {
            let withPreview = Data((head + #","preview":\#(previewJSON)}"#).utf8)
            if withPreview.count <= Self.bucket { return (withPreview, true) }
        }
        return (Data((head + "}").utf8), false)
    }
}
