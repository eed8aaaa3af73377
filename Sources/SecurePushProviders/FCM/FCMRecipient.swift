/// How an FCM message addresses its device: by registration token (`message.token`) or, for apps on
/// Firebase Installations, by Firebase Installation ID (`message.fid`). A FID is 22 characters of
/// base64url whose first character is `c`, `d`, `e` or `f` (its first four bits are 0111); registration
/// tokens are far longer, so the token's shape decides and a device registers either kind as its token.
public enum FCMRecipient: Sendable, Hashable {
    /// A registration token.
    case registrationToken
    /// A Firebase Installation ID.
    case installationID

    /// The kind of `token`.
    public init(token: String) {
        let bytes = Array(token.utf8)
        let isBase64URL = bytes.allSatisfy { byte in
            (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2D || byte == 0x5F
        }
        if bytes.count == 22, isBase64URL, let first = bytes.first, (0x63...0x66).contains(first) {
            self = .installationID
        } else {
            self = .registrationToken
        }
    }

    /// The message field that carries the token.
    public var field: String {
        switch self {
        case .registrationToken: "token"
        case .installationID: "fid"
        }
    }
}
