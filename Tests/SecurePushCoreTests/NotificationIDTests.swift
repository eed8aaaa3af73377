import Foundation
import SecurePushCore
import Testing

@Suite("Notification ids")
struct NotificationIDTests {
    @Test(
        "only the canonical 36-character form parses",
        arguments: [
            "", "not-a-uuid", "0f8fad5b-d9cb-469f-a165-70867728950", "0f8fad5bd9cb469fa16570867728950e",
            "0f8fad5b-d9cb-469f-a165-70867728950e0", "{0f8fad5b-d9cb-469f-a165-70867728950e}", "../../etc/passwd",
        ])
    func rejectsMalformed(_ text: String) {
        #expect(NotificationID(text) == nil)
    }

    @Test("the canonical form round-trips in lowercase")
    func roundTrip() throws {
        let id = try #require(NotificationID("0F8FAD5B-D9CB-469F-A165-70867728950E"))
        #expect(id.description == "0f8fad5b-d9cb-469f-a165-70867728950e")
    }
}
