import Foundation
import SecurePushCore
import Testing

@Suite("Sealed plaintext")
struct PushSealTests {
    /// A preview object whose JSON text is exactly `length` bytes.
    static func preview(bytes length: Int) -> String {
        #"{"b":""# + String(repeating: "x", count: length - 8) + #""}"#
    }

    @Test("a preview travels exactly when id and preview fit the bucket; else the plaintext is the id alone")
    func boundary() throws {
        let id = NotificationID(UUID())
        let idOnly = Data(#"{"id":"\#(id.description)"}"#.utf8)
        var fitting = 0
        for length in 940...1000 {
            let seal = PushSeal(previewJSON: Self.preview(bytes: length), key: nil)
            let plaintext = seal.plaintext(for: id)
            #expect(plaintext.count <= PushSeal.bucket, "\(length)-byte preview: \(plaintext.count) bytes")
            if seal.previewFits {
                fitting = length
                #expect(plaintext.count == length + 56, "the id and the member add 56 bytes")
                let object = try #require(try JSONSerialization.jsonObject(with: plaintext) as? [String: Any])
                #expect(object["id"] as? String == id.description && object["preview"] is [String: Any])
            } else {
                #expect(plaintext == idOnly)
            }
        }
        #expect(fitting == PushSeal.bucket - 56, "the largest preview that travels fills the bucket exactly")
        #expect(!PushSeal(previewJSON: nil, key: nil).previewFits)
        #expect(PushSeal(previewJSON: nil, key: nil).plaintext(for: id) == idOnly)
    }
}
