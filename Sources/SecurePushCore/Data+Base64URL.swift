import Foundation

extension Data {
    /// Unpadded base64url (RFC 4648 §5), as JWTs and Web Push keys use it.
    package var base64URLEncodedString: String {
        base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes base64url with or without padding (plain base64 is accepted too).
    package init?(base64URLEncoded text: String) {
        var value = text.trimmingCharacters(in: .whitespaces)
            .replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        value = value.replacingOccurrences(of: "=", with: "")
        let remainder = value.count % 4
        if remainder == 1 { return nil }
        if remainder > 0 { value += String(repeating: "=", count: 4 - remainder) }
        self.init(base64Encoded: value)
    }
}
