import Foundation
import HTTPTypes
import SecurePushCore

/// A device credential as presented: `Authorization: Bearer <device_id>.<device_secret>`. Parsed on the
/// header's bytes: it is on every read, so it avoids Foundation's string machinery.
public struct DeviceCredential: Sendable {
    /// The device id.
    public var deviceID: UUID
    /// The 32 secret bytes.
    public var secret: [UInt8]

    /// Parses the header; `nil` when absent or malformed.
    public init?(authorization: String?) {
        guard let authorization, let token = BearerToken.parseBytes(authorization), token.count == 36 + 1 + 43, token[36] == UInt8(ascii: ".")
        else { return nil }
        guard let id = UUID(canonical: token[0..<36]), token[37...].allSatisfy(Base64URL.isAlphabet) else { return nil }
        self.deviceID = id
        // 43 characters of the alphabet name this device; spelled other than canonically they are a wrong
        // secret for it (checked and throttled as one), never the secret they would decode to.
        self.secret = Base64URL.decode(token[37...]) ?? []
    }
}

/// `Authorization: Bearer <token>` parsing.
enum BearerToken {
    /// The token of a bearer header: the scheme in any case, optional spaces or tabs around, at most 8192
    /// bytes, no space inside.
    static func parse(_ header: String) -> String? {
        parseBytes(header).map { String(decoding: $0, as: UTF8.self) }
    }

    static func parseBytes(_ header: String) -> [UInt8]? {
        var bytes = Array(header.utf8)[...]
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        while let first = bytes.first, isBlank(first) { bytes = bytes.dropFirst() }
        while let last = bytes.last, isBlank(last) { bytes = bytes.dropLast() }
        guard bytes.count > 7 else { return nil }
        let scheme = bytes.prefix(6).map { $0 | 0x20 }  // ASCII lowercase
        guard scheme.elementsEqual("bearer".utf8), bytes[bytes.startIndex + 6] == UInt8(ascii: " ") else { return nil }
        var token = bytes.dropFirst(7)
        while let first = token.first, isBlank(first) { token = token.dropFirst() }
        guard !token.isEmpty, token.count <= 8192, !token.contains(where: isBlank) else { return nil }
        return Array(token)
    }
}

/// base64url without padding: only its alphabet is accepted here (no padding, no whitespace), and only the
/// canonical spelling: the unused low bits of the last character must be zero, so one secret has one text
/// (a 43-character secret's last character carries two such bits: `Q`, `R`, `S` and `T` would otherwise
/// all decode alike).
enum Base64URL {
    static func decode(_ text: String) -> [UInt8]? {
        decode(Array(text.utf8)[...])
    }

    static func decode(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in text {
            guard let value = Self.value(byte) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        guard accumulator & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return output
    }

    /// Whether `byte` is a base64url character.
    static func isAlphabet(_ byte: UInt8) -> Bool { value(byte) != nil }

    private static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
