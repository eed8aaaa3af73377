/// The member names of a JSON text's top-level object, scanned without decoding the values: JSON decoders
/// keep one of two duplicate names silently, so a token whose claims name `sub` twice could mean two users
/// (RFC 7519 §4: such a token is to be rejected).
enum JSONObjectKeys {
    /// The top-level object's member names in order, or `nil` when the text is not an object.
    static func names(_ bytes: [UInt8]) -> [String]? {
        var index = 0
        func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
        var names: [String] = []
        var depth = 0
        var expectingName = true
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                let start = index + 1
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                guard index < bytes.count else { return nil }
                if depth == 1 && expectingName {
                    names.append(String(decoding: bytes[start..<index], as: UTF8.self))
                    expectingName = false
                }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                if depth == 1 { expectingName = true }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 { return names }
            case UInt8(ascii: ","):
                if depth == 1 { expectingName = true }
            default:
                break
            }
            index += 1
        }
        return nil
    }

    /// Whether the top-level object names a member twice (escaped spellings compared as written).
    static func hasDuplicates(_ bytes: [UInt8]) -> Bool {
        guard let names = names(bytes) else { return false }
        return Set(names).count != names.count
    }
}
