import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SecurePushCore
import Testing

@testable import SecurePushAPI

/// The body of `POST /v1/notifications/fetch`: `{"ids": [...]}` with 1 to 50 notification ids.
@Suite("Fetch request body")
struct FetchRequestInputTests {
    static let a = "0f8fad5b-d9cb-469f-a165-70867728950e"
    static let b = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
    static let c = "16fd2706-8baf-433b-82eb-8c7fada847da"

    static func parse(_ json: String) throws -> [String] {
        try FetchRequestInput(json: Data(json.utf8)).ids.map(\.description)
    }

    /// The `APIError` `json` is refused with, or `nil` when it parses.
    static func refusal(_ json: String) -> APIError? {
        apiRefusal(json) { _ = try parse(json) }
    }

    static func ids(_ count: Int) -> String {
        let list = (0..<count).map { _ in "\"\(UUID().uuidString)\"" }.joined(separator: ",")
        return #"{"ids": [\#(list)]}"#
    }

    @Test("ids are parsed in order, lowercased, and repeats collapse onto their first occurrence")
    func parses() throws {
        #expect(try Self.parse(#"{"ids": ["\#(Self.a)"]}"#) == [Self.a])
        #expect(try Self.parse(#"{"ids": ["\#(Self.a.uppercased())"]}"#) == [Self.a])
        let repeated = #"{"ids": ["\#(Self.b)", "\#(Self.a)", "\#(Self.b)", "\#(Self.c)", "\#(Self.a.uppercased())"]}"#
        #expect(try Self.parse(repeated) == [Self.b, Self.a, Self.c])
    }

    @Test("1 to 50 ids; none or 51 (even all the same) is 400 invalid_ids")
    func bounds() throws {
        #expect(try Self.parse(Self.ids(1)).count == 1)
        #expect(try Self.parse(Self.ids(50)).count == 50)
        for json in [Self.ids(0), Self.ids(51), #"{"ids": [\#(Array(repeating: "\"\(Self.a)\"", count: 51).joined(separator: ","))]}"#] {
            let refusal = Self.refusal(json)
            #expect(refusal?.status == .badRequest)
            #expect(refusal?.code == .invalidIDs)
        }
        #expect(Self.refusal(Self.ids(51))?.message.contains("it holds 51") == true)
    }

    @Test("a body that is not a JSON object is 400 invalid_json", arguments: ["", "nope", "[]", #""ids""#, "null", #"{"ids": ["#])
    func notAnObject(json: String) {
        let refusal = Self.refusal(json)
        #expect(refusal?.status == .badRequest)
        #expect(refusal?.code == .invalidJSON)
    }

    @Test("a missing or non-array ids, an unknown field or a bad element is 400 invalid_ids naming the culprit")
    func invalidIDs() {
        let cases: [(json: String, mentions: String)] = [
            ("{}", "\"ids\" is required"),
            (#"{"ids": "\#(Self.a)"}"#, "\"ids\" is required"),
            (#"{"ids": null}"#, "\"ids\" is required"),
            (#"{"ids": ["\#(Self.a)"], "zeta": 1, "alpha": 2}"#, "Unknown field(s): alpha, zeta"),
            (#"{"ids": ["\#(Self.a)", 42]}"#, "\"ids[1]\""),
            (#"{"ids": ["\#(Self.a)", null]}"#, "\"ids[1]\""),
            (#"{"ids": [true]}"#, "\"ids[0]\""),
            (#"{"ids": [["\#(Self.a)"]]}"#, "\"ids[0]\""),
            (#"{"ids": ["not-an-id"]}"#, "\"ids[0]\""),
            (#"{"ids": ["\#(Self.a.replacingOccurrences(of: "-", with: ""))"]}"#, "\"ids[0]\""),
            (#"{"ids": ["\#(Self.a) "]}"#, "\"ids[0]\""),
            (#"{"ids": ["{\#(Self.a)}"]}"#, "\"ids[0]\""),
        ]
        for (json, mentions) in cases {
            let refusal = Self.refusal(json)
            #expect(refusal?.status == .badRequest, "\(json)")
            #expect(refusal?.code == .invalidIDs, "\(json)")
            #expect(refusal?.message.contains(mentions) == true, "\(json): \(refusal?.message ?? "accepted")")
        }
    }

    @Test("an id with non-hex characters is refused")
    func nonHexID() {
        // Linux Foundation's `UUID(uuidString:)` alone reads `+f`, `0x` or a space as a hex byte.
        for id in ["+f8fad5b-d9cb-469f-a165-70867728950e", "0x8fad5b-d9cb-469f-a165-70867728950e", " f8fad5b-d9cb-469f-a165-70867728950e"] {
            #expect(Self.refusal(#"{"ids": ["\#(id)"]}"#)?.code == .invalidIDs, "\(id)")
        }
    }

    static func request(_ body: RequestBody) -> Request {
        Request(head: HTTPRequest(method: .post, scheme: "http", authority: "localhost", path: "/v1/notifications/fetch"), body: body)
    }

    @Test("read() parses a body within the size limit and refuses a larger one with 413")
    func readBounded() async throws {
        var limits = APILimits()
        let json = #"{"ids": ["\#(Self.a)"]}"#
        limits.maxRequestBodyBytes = json.utf8.count
        let input = try await FetchRequestInput.read(Self.request(.init(buffer: ByteBuffer(string: json))), limits: limits)
        #expect(input.ids.map(\.description) == [Self.a])
        limits.maxRequestBodyBytes = json.utf8.count - 1
        let error = await #expect(throws: (any Error).self) {
            try await FetchRequestInput.read(Self.request(.init(buffer: ByteBuffer(string: json))), limits: limits)
        }
        #expect((error as? any HTTPResponseError)?.status == .contentTooLarge)
    }

    @Test("read() gives up on a body that does not arrive in time with 408 request_timeout")
    func readTimeout() async throws {
        var limits = APILimits()
        limits.bodyReadTimeout = .milliseconds(20)
        let (stream, continuation) = AsyncStream<ByteBuffer>.makeStream()
        continuation.yield(ByteBuffer(string: #"{"ids": ["#))
        let error = await #expect(throws: APIError.self) {
            try await FetchRequestInput.read(Self.request(.init(asyncSequence: stream)), limits: limits)
        }
        #expect(error?.status == .requestTimeout)
        #expect(error?.code == .requestTimeout)
        continuation.finish()
    }
}
