import Foundation
import HTTPTypes
import SecurePushCore
import Testing

@testable import SecurePushAPI

/// The body of `POST /v1/devices`: `platform`, `token` and string options, or a Web Push subscription.
@Suite("Device registration body")
struct DeviceRegistrationInputTests {
    static func parse(_ json: String) throws -> DeviceRegistrationInput {
        try DeviceRegistrationInput(json: Data(json.utf8))
    }

    /// The `APIError` `json` is refused with, or `nil` when it parses.
    static func refusal(_ json: String) -> APIError? {
        apiRefusal(json) { _ = try parse(json) }
    }

    static func subscription(_ fields: String) -> String {
        #"{"platform": "webpush", "subscription": {\#(fields)}}"#
    }

    static let endpoint = #""endpoint": "https://push.example.net/send/abc""#
    static let keys = #""keys": {"p256dh": "BPub", "auth": "sEcr"}"#

    @Test("platform and token are taken out; the other fields become sorted options JSON")
    func parses() throws {
        let input = try Self.parse(#"{"platform": "apns", "token": "a1b2", "topic": "com.example", "environment": "sandbox"}"#)
        #expect(input.platform == "apns")
        #expect(input.token == "a1b2")
        #expect(input.optionsJSON == #"{"environment":"sandbox","topic":"com.example"}"#)
        #expect(try Self.parse(#"{"platform": "fcm", "token": "t"}"#).optionsJSON == "{}")
        // Tokens that are not URLs may hold any text but NUL.
        #expect(try Self.parse(#"{"platform": "apns", "token": "a b é"}"#).token == "a b é")
    }

    @Test("a body that is not a JSON object is 400 invalid_json", arguments: ["", "x", "[]", "null", #""apns""#])
    func notAnObject(json: String) {
        #expect(Self.refusal(json)?.status == .badRequest)
        #expect(Self.refusal(json)?.code == .invalidJSON)
    }

    @Test("a missing platform, token or a non-string option is 400 invalid_device naming the field")
    func invalidDevice() {
        let cases: [(json: String, mentions: String)] = [
            (#"{"token": "t"}"#, "\"platform\" is required: one of \(Platform.allCases.map(\.rawValue).joined(separator: ", "))"),
            (#"{"platform": 1, "token": "t"}"#, "\"platform\" is required"),
            (#"{"platform": "fcm"}"#, "\"token\" is required"),
            (#"{"platform": "fcm", "token": ""}"#, "\"token\" is required"),
            (#"{"platform": "fcm", "token": 7}"#, "\"token\" is required"),
            (#"{"platform": "fcm", "token": "t", "priority": 10}"#, "Platform option \"priority\" must be a string"),
            (#"{"platform": "fcm", "token": "t", "flag": true}"#, "Platform option \"flag\" must be a string"),
            (#"{"platform": "fcm", "token": "t", "extra": null}"#, "Platform option \"extra\" must be a string"),
            (#"{"platform": "apns", "token": "t", "subscription": {}}"#, "Platform option \"subscription\" must be a string"),
            (#"{"platform": "fcm", "token": "t\u0000"}"#, "NUL"),
            (#"{"platform": "fcm\u0000", "token": "t"}"#, "NUL"),
            (#"{"platform": "fcm", "token": "t", "k": "v\u0000"}"#, "NUL"),
            (#"{"platform": "fcm", "token": "t", "k\u0000": "v"}"#, "NUL"),
        ]
        for (json, mentions) in cases {
            let refusal = Self.refusal(json)
            #expect(refusal?.status == .badRequest, "\(json)")
            #expect(refusal?.code == .invalidDevice, "\(json)")
            #expect(refusal?.message.contains(mentions) == true, "\(json): \(refusal?.message ?? "accepted")")
        }
    }

    @Test("a Web Push endpoint or WNS channel URI must be printable ASCII without spaces")
    func urlTokens() throws {
        for platform in ["webpush", "wns"] {
            #expect(try Self.parse(#"{"platform": "\#(platform)", "token": "https://h.example/~a?b=%20"}"#).token == "https://h.example/~a?b=%20")
            for token in ["https://h.example/a b", "https://h.example/é", #"https://h.example/\t"#, #"https://h.example/\u007f"#] {
                let refusal = Self.refusal(#"{"platform": "\#(platform)", "token": "\#(token)"}"#)
                #expect(refusal?.code == .invalidDevice, "\(platform) \(token)")
                #expect(refusal?.message.contains("printable ASCII") == true, "\(platform) \(token)")
            }
        }
    }

    @Test("a browser's PushSubscription becomes token, p256dh and auth")
    func subscription() throws {
        for expiration in ["", #", "expirationTime": null"#, #", "expirationTime": 1767225600000"#, #", "expirationTime": 1.5"#] {
            let input = try Self.parse(Self.subscription("\(Self.endpoint), \(Self.keys)\(expiration)"))
            #expect(input.platform == "webpush")
            #expect(input.token == "https://push.example.net/send/abc")
            #expect(input.optionsJSON == #"{"auth":"sEcr","p256dh":"BPub"}"#)
        }
    }

    @Test("a subscription that is malformed, incomplete, padded or doubled by flat fields is 400 invalid_device")
    func badSubscription() {
        let cases: [(json: String, mentions: String)] = [
            (#"{"platform": "webpush", "subscription": "x"}"#, "must be a PushSubscription object"),
            (#"{"platform": "webpush", "subscription": null}"#, "must be a PushSubscription object"),
            (Self.subscription(Self.keys), "needs \"endpoint\""),
            (Self.subscription(Self.endpoint), "needs \"endpoint\""),
            (Self.subscription(#"\#(Self.endpoint), "keys": {"p256dh": "BPub"}"#), "needs \"endpoint\""),
            (Self.subscription(#"\#(Self.endpoint), "keys": {"p256dh": "BPub", "auth": 1}"#), "needs \"endpoint\""),
            (Self.subscription(#""endpoint": 5, \#(Self.keys)"#), "needs \"endpoint\""),
            (Self.subscription(#"\#(Self.endpoint), \#(Self.keys), "expirationTime": "soon""#), "expirationTime"),
            (Self.subscription(#"\#(Self.endpoint), \#(Self.keys), "expirationTime": true"#), "expirationTime"),
            (
                Self.subscription(#"\#(Self.endpoint), "keys": {"p256dh": "P", "auth": "A", "x": "1"}, "b": 1, "a": 2"#),
                "Unknown subscription field(s): a, b, keys.x"
            ),
            (#"{"platform": "webpush", "token": "t", "subscription": {\#(Self.endpoint), \#(Self.keys)}}"#, "not both"),
            (#"{"platform": "webpush", "auth": "A", "subscription": {\#(Self.endpoint), \#(Self.keys)}}"#, "\"auth\", not both"),
        ]
        for (json, mentions) in cases {
            let refusal = Self.refusal(json)
            #expect(refusal?.status == .badRequest, "\(json)")
            #expect(refusal?.code == .invalidDevice, "\(json)")
            #expect(refusal?.message.contains(mentions) == true, "\(json): \(refusal?.message ?? "accepted")")
        }
    }
}
