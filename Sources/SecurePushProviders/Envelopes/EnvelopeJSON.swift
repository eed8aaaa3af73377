import Foundation

/// A JSON value written deterministically: object members in sorted key order, no whitespace, and only
/// the escapes JSON requires (`"`, `\` and control characters). The bytes on the wire are therefore
/// exactly those of the golden files in docs/envelopes/.
enum EnvelopeJSON: Sendable, Hashable {
    case string(String)
    case int(Int)
    case bool(Bool)
    case object([String: EnvelopeJSON])
    case array([EnvelopeJSON])
    /// JSON text written as is: a preview, already valid JSON from PostgreSQL (`jsonb::text`).
    case raw(String)

    /// The UTF-8 bytes.
    var data: Data {
        var text = ""
        write(into: &text)
        return Data(text.utf8)
    }

    func write(into text: inout String) {
        switch self {
        case .string(let value):
            Self.writeString(value, into: &text)
        case .int(let value):
            text += String(value)
        case .bool(let value):
            text += value ? "true" : "false"
        case .object(let members):
            text += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { text += "," }
                Self.writeString(key, into: &text)
                text += ":"
                members[key]!.write(into: &text)
            }
            text += "}"
        case .raw(let json):
            text += json
        case .array(let elements):
            text += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { text += "," }
                element.write(into: &text)
            }
            text += "]"
        }
    }

    static func writeString(_ value: String, into text: inout String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20: text += String(format: "\\u%04x", scalar.value)
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
