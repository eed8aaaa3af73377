import Foundation
import HTTPTypes
import SecurePushCore

/// A device credential as presented: `Authorization: Bearer <device_id>.<device_secret>`.
public struct DeviceCredential: Sendable {
    /// The device id.
    public var deviceID: UUID
    /// The 32 secret bytes.
    public var secret: [UInt8]

    /// Parses the header; `nil` when absent or malformed.
    public init?(authorization: String?) {
        guard let authorization, let bearer = BearerToken.parse(authorization) else { return nil }
        let parts = bearer.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 36, let id = UUID(uuidString: String(parts[0])),
            let secret = Base64URL.decode(String(parts[1])), secret.count == 32
        else { return nil }
        self.deviceID = id
        self.secret = secret
    }
}

/// `Authorization: Bearer <token>` parsing.
enum BearerToken {
    static func parse(_ header: String) -> String? {
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        guard trimmed.count > 7, trimmed.prefix(7).lowercased() == "bearer " else { return nil }
        let token = trimmed.dropFirst(7).trimmingCharacters(in: .whitespaces)
        guard !token.isEmpty, token.count <= 8192, !token.contains(" ") else { return nil }
        return token
    }
}

/// base64url without padding: only its alphabet is accepted here (no padding, no whitespace).
enum Base64URL {
    static func decode(_ text: String) -> [UInt8]? {
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
        return Data(base64URLEncoded: text).map { [UInt8]($0) }
    }
}
