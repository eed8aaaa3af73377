import Foundation

extension Data {
    /// Unpadded base64url (RFC 4648 §5), as JWTs, Web Push keys and sealed previews use it. Rewritten byte by
    /// byte: Foundation's string search on Linux made three `replacingOccurrences` cost more than the base64
    /// itself for a 1503-character sealed value (`ops/bench`'s sealed APNs row).
    package var base64URLEncodedString: String {
        var bytes = base64EncodedData()
        while bytes.last == UInt8(ascii: "=") { bytes.removeLast() }
        for index in bytes.indices {
            switch bytes[index] {
            case UInt8(ascii: "+"): bytes[index] = UInt8(ascii: "-")
            case UInt8(ascii: "/"): bytes[index] = UInt8(ascii: "_")
            default: break
            }
        }
        return String(decoding: bytes, as: UTF8.self)
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
