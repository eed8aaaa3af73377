import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import SecurePushStore
import Testing

@testable import SecurePushAPI

/// `GET /v1/notifications`'s query (`unread`, `limit`, `cursor`, `include`) and the cursor's wire token.
@Suite("List query and cursor token")
struct ListQueryTests {
    static let id = UUID(uuidString: "0f8fad5b-d9cb-469f-a165-70867728950e")!
    static let uuid = "0f8fad5b-d9cb-469f-a165-70867728950e"

    /// The query as the route reads it: from the request URI's query string.
    static func query(_ text: String) throws -> ListQuery {
        try ListQuery(URI("/v1/notifications?\(text)").queryParameters)
    }

    /// The `APIError` `text` is refused with, or `nil` when it parses.
    static func refusal(_ text: String) -> APIError? {
        apiRefusal(text) { _ = try query(text) }
    }

    @Test("a cursor's token is <micros>_<lowercase uuid> and parses back to the same position")
    func tokenRoundTrip() throws {
        for micros: Int64 in [0, 1, 1_712_000_000_123_456, 999_999_999_999_999_999] {
            let cursor = ListCursor(createdAtMicros: micros, id: Self.id)
            #expect(cursor.token == "\(micros)_\(Self.uuid)")
            #expect(ListCursor(token: cursor.token) == cursor)
        }
        let upper = try #require(ListCursor(token: "42_\(Self.uuid.uppercased())"))
        #expect(upper == ListCursor(createdAtMicros: 42, id: Self.id))
        #expect(upper.token == "42_\(Self.uuid)")
    }

    @Test(
        "a malformed token is refused",
        arguments: [
            "", "42", "42\(uuid)", "42-\(uuid)", "_\(uuid)", "42_", "_", "1000000000000000000_\(uuid)", "12a_\(uuid)",
            "0x1_\(uuid)", " 42_\(uuid)", "4 2_\(uuid)", "42_not-a-uuid", "42_\(uuid.replacingOccurrences(of: "-", with: ""))",
            "42_\(uuid.dropLast())", "42_\(uuid)0", "42_\(uuid)_x", "42_\(uuid) ", "42_0f8fad5b-d9cb-469f-a165-70867728950g",
            "42_0f8fad5bd-9cb-469f-a165-70867728950e", "42__\(uuid)",
        ]
    )
    func malformedTokens(token: String) {
        #expect(ListCursor(token: token) == nil)
    }

    @Test("a signed micros part or a non-hex uuid is refused, as the contract's pattern says")
    func signedMicros() {
        // `Int64("+42")` and `Int64("-42")` parse: the micros are checked to be digits first.
        #expect(ListCursor(token: "+42_\(Self.uuid)") == nil)
        #expect(ListCursor(token: "-42_\(Self.uuid)") == nil)
        // Linux Foundation's `UUID(uuidString:)` alone reads `+f` or `0x` as a hex byte.
        #expect(ListCursor(token: "42_+f8fad5b-d9cb-469f-a165-70867728950e") == nil)
        #expect(ListCursor(token: "42_0x8fad5b-d9cb-469f-a165-70867728950e") == nil)
    }

    @Test("no parameters: every unread notification, 50 at a time, from the start, without payloads")
    func defaults() throws {
        for text in ["", "other=1"] {
            let query = try Self.query(text)
            #expect(query.unreadOnly == false)
            #expect(query.limit == 50)
            #expect(query.cursor == nil)
            #expect(query.includePayload == false)
        }
    }

    @Test("limit takes 1 to 100; anything else is 400 invalid_parameter")
    func limit() throws {
        #expect(try Self.query("limit=1").limit == 1)
        #expect(try Self.query("limit=100").limit == 100)
        #expect(try Self.query("limit=37").limit == 37)
        for bad in ["0", "101", "abc", "", "-1", "1.5", "1e2", "99999999999999999999"] {
            let refusal = Self.refusal("limit=\(bad)")
            #expect(refusal?.status == .badRequest, "limit=\(bad)")
            #expect(refusal?.code == .invalidParameter, "limit=\(bad)")
        }
    }

    @Test("unread takes true, 1, false and 0; anything else is 400 invalid_parameter")
    func unread() throws {
        #expect(try Self.query("unread=true").unreadOnly == true)
        #expect(try Self.query("unread=1").unreadOnly == true)
        #expect(try Self.query("unread=false").unreadOnly == false)
        #expect(try Self.query("unread=0").unreadOnly == false)
        for bad in ["yes", "TRUE", "", "2"] {
            let refusal = Self.refusal("unread=\(bad)")
            #expect(refusal?.status == .badRequest, "unread=\(bad)")
            #expect(refusal?.code == .invalidParameter, "unread=\(bad)")
        }
    }

    @Test("include takes only payload; anything else is 400 invalid_parameter")
    func include() throws {
        #expect(try Self.query("include=payload").includePayload == true)
        for bad in ["payloads", "PAYLOAD", "", "payload,meta"] {
            let refusal = Self.refusal("include=\(bad)")
            #expect(refusal?.status == .badRequest, "include=\(bad)")
            #expect(refusal?.code == .invalidParameter, "include=\(bad)")
        }
    }

    @Test("cursor takes a token (percent-encoded or not); a bad one is 400 invalid_cursor")
    func cursor() throws {
        let expected = ListCursor(createdAtMicros: 1_712_000_000_123_456, id: Self.id)
        #expect(try Self.query("cursor=\(expected.token)").cursor == expected)
        #expect(try Self.query("cursor=1712000000123456%5F\(Self.uuid)").cursor == expected)
        for bad in ["", "abc", "42_\(Self.uuid)x", "1000000000000000000_\(Self.uuid)"] {
            let refusal = Self.refusal("cursor=\(bad)")
            #expect(refusal?.status == .badRequest, "cursor=\(bad)")
            #expect(refusal?.code == .invalidCursor, "cursor=\(bad)")
        }
    }

    @Test("all four parameters together")
    func combined() throws {
        let query = try Self.query("unread=1&limit=7&cursor=5_\(Self.uuid)&include=payload")
        #expect(query.unreadOnly == true)
        #expect(query.limit == 7)
        #expect(query.cursor == ListCursor(createdAtMicros: 5, id: Self.id))
        #expect(query.includePayload == true)
    }
}
