import Foundation
import Testing

@testable import SecurePushAPI

@Suite("Device credential parsing")
struct DeviceCredentialTests {
    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    @Test("base64url decoding agrees with Foundation's base64 for every length up to 64 bytes")
    func base64() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...64 {
            let bytes = (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            #expect(Base64URL.decode(Self.base64URL(bytes)) == bytes, "length \(length)")
        }
        for bad in ["a", "abcde", "ab+c", "ab/c", "ab=c", "ab c", "é"] {
            #expect(Base64URL.decode(bad) == nil, "\(bad)")
        }
    }

    @Test("only the canonical spelling: a secret whose last character differs in its unused bits is refused")
    func canonicalOnly() {
        let secret = (0..<32).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) }
        let canonical = Self.base64URL(secret)
        #expect(Base64URL.decode(canonical) == secret)
        // 32 bytes are 43 characters, the last one carrying 4 bits of the secret and 2 unused ones: the three
        // other characters with the same 4 bits decode to the same bytes unless the unused bits are checked.
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let last = alphabet.firstIndex(of: canonical.last!)!
        #expect(last % 4 == 0, "the encoder leaves the unused bits zero")
        for sibling in 1...3 {
            let spelled = String(canonical.dropLast()) + String(alphabet[last + sibling])
            #expect(Base64URL.decode(spelled) == nil, "\(spelled)")
            // Still this device's credential (a wrong secret, throttled for the id), never the canonical secret.
            let credential = DeviceCredential(authorization: "Bearer \(UUID().uuidString.lowercased()).\(spelled)")
            #expect(credential != nil && credential?.secret != secret && credential?.secret.isEmpty == true)
        }
    }

    @Test("a well-formed credential parses; every malformed one is refused")
    func credentials() {
        let id = UUID()
        let secret = (0..<32).map { UInt8($0 * 7 % 256) }
        let token = "\(id.uuidString.lowercased()).\(Self.base64URL(secret))"
        for header in [
            "Bearer \(token)", "bearer \(token)", "BEARER  \(token)  ", "\tBearer \(token)",
            "Bearer \(token.uppercased().prefix(36))\(token.dropFirst(36))",
        ] {
            let credential = DeviceCredential(authorization: header)
            #expect(credential?.deviceID == id, "\(header)")
            #expect(credential?.secret == secret, "\(header)")
        }
        let short = "\(id.uuidString).\(Self.base64URL(Array(secret.prefix(31))))"
        let dashless = id.uuidString.replacingOccurrences(of: "-", with: "") + "xxxx"
        for header in [
            nil, "", "Bearer", "Bearer ", "Basic \(token)", "Bearer\(token)", "Bearer \(token) x", "Bearer \(short)",
            "Bearer \(token.replacingOccurrences(of: ".", with: ":"))", "Bearer \(dashless).\(Self.base64URL(secret))",
            "Bearer g\(token.dropFirst())", "Bearer \(token)=", "Bearer \(token.dropLast())+",
        ] {
            #expect(DeviceCredential(authorization: header) == nil, "\(header ?? "nil")")
        }
        #expect(BearerToken.parse("Bearer  abc ") == "abc")
        #expect(BearerToken.parse("Bearer a b") == nil)
        #expect(BearerToken.parse("Bearer " + String(repeating: "a", count: 8193)) == nil)
    }
}
