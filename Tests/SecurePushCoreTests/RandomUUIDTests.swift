import Foundation
import SecurePushCore
import Testing

@Suite("random UUIDs")
struct RandomUUIDTests {
    @Test("ids from the system generator are version 4, of the RFC 9562 variant, and distinct")
    func system() {
        let ids = (0..<10_000).map { _ in UUID.random() }
        #expect(Set(ids).count == ids.count)
        for id in ids {
            let text = id.uuidString
            #expect(text[text.index(text.startIndex, offsetBy: 14)] == "4")
            #expect("89AB".contains(text[text.index(text.startIndex, offsetBy: 19)]))
        }
    }
}
