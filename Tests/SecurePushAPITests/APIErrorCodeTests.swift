import Foundation
import Testing

@testable import SecurePushAPI

@Suite("API error codes")
struct APIErrorCodeTests {
    @Test("every named code is a distinct snake_case word, listed in the contract's error schema")
    func codesAreDocumented() throws {
        let texts = APIErrorCode.named.map(\.text)
        #expect(Set(texts).count == texts.count, "two codes share a word")
        for text in texts {
            #expect(text.allSatisfy { $0.isLowercase || $0 == "_" }, "\(text) is not snake_case")
        }
        let schemas = (OpenAPIDocument.json["components"] as? [String: Any])?["schemas"] as? [String: Any]
        let error = (schemas?["Error"] as? [String: Any])?["properties"] as? [String: Any]
        let fields = ((error?["error"] as? [String: Any])?["properties"] as? [String: Any])
        let description = try #require((fields?["code"] as? [String: Any])?["description"] as? String)
        let listed = Set(description.split(whereSeparator: { !$0.isLetter && $0 != "_" }).map(String.init))
        for text in texts {
            #expect(listed.contains(text), "docs/openapi.json's error code description does not list \(text)")
        }
        #expect(APIErrorCode.http(status: 418).text == "http_418")
    }
}
