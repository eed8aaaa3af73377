import Foundation
import SecurePushCore
import Testing

@Suite("base64url")
struct Base64URLTests {
    @Test("encodes without padding, with - and _ for + and /, and decodes back, for every length and byte value")
    func roundTrip() throws {
        #expect(Data([0xfb, 0xff]).base64URLEncodedString == "-_8")
        #expect(Data([0xfb, 0xef, 0xbe]).base64URLEncodedString == "----")
        #expect(Data().base64URLEncodedString == "")
        for length in 0..<70 {
            let data = Data((0..<length).map { _ in UInt8.random(in: 0...255) })
            let text = data.base64URLEncodedString
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(text.count == (length * 4 + 2) / 3)
            #expect(Data(base64URLEncoded: text) == data)
        }
    }
}
