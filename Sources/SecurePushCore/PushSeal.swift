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
