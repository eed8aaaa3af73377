import Crypto
import Foundation
import SecurePushCore
import SecurePushFakes
import SecurePushProviders
import Testing

/// Sealed pushes (`SECUREPUSH_SEALED_PREVIEWS=on`, docs/envelopes.md "Sealed previews") against their golden
/// files, and the rule they exist for: a sealed push with a preview and one without have the same size.
@Suite("Sealed envelopes on the wire match docs/envelopes")
struct SealedEnvelopeGoldenTests {
    static let preview = #"{"body":"€12.40 at Bakery","title":"Card payment"}"#

    /// A device's sealing key (the private half stays here, as on a phone).
    static func sealingKey() -> SealingPublicKey {
        let key = P256.KeyAgreement.PrivateKey()
        let auth = Data((0..<16).map { _ in UInt8.random(in: 0...255) })
        return SealingPublicKey(publicKey: key.publicKey.x963Representation, authSecret: auth)!
    }

    static func sealed(_ push: Push, preview: String?, key: SealingPublicKey?) -> Push {
        var push = push
        push.seal = PushSeal(previewJSON: preview, key: key)
        return push
    }

    /// The `{sealed}` placeholder: the sealed value, which must have the bucket's length.
    static func sealedValue(_ text: String?, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: String] {
        let value = try #require(text, "no sealed value", sourceLocation: sourceLocation)
        #expect(value.count == 1503, "a sealed value is 1503 characters, not \(value.count)", sourceLocation: sourceLocation)
        #expect(value.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }, sourceLocation: sourceLocation)
        return ["sealed": value]
    }

    static func apnsSealed(_ request: FakeRequest) throws -> String? {
        (try JSONSerialization.jsonObject(with: request.body) as? [String: Any])?["secureSealed"] as? String
    }

    @Test("APNs sealed, with a preview and without: secureSealed of 1503 characters beside secureId, bodies of one size")
    func apns() async throws {
        var sizes: [Int] = []
        for (name, preview) in [("apns-sealed", Self.preview), ("apns-sealed-id-only", nil)] {
            try await APNsFixture.with { fixture in
                let push = Self.sealed(
                    EnvelopeGoldenTests.push(token: TestSupport.randomHexToken(), platform: .apns), preview: preview, key: Self.sealingKey())
                try await EnvelopeGoldenTests.expectGolden(name, push, fixture: fixture) { request in
                    sizes.append(request.body.count)
                    #expect(!String(decoding: request.body, as: UTF8.self).contains("Bakery"))
                    return EnvelopeGoldenTests.apnsValues(push, request).merging(try Self.sealedValue(try Self.apnsSealed(request))) { $1 }
                }
            }
        }
        #expect(sizes.count == 2 && sizes[0] == sizes[1], "sealed APNs bodies with and without a preview: \(sizes)")
    }

    @Test("FCM sealed: data.secureSealed, the body of an id-only seal's size")
    func fcm() async throws {
        var sizes: [Int] = []
        for (name, preview) in [("fcm-sealed", Self.preview), (nil, nil)] {
            try await FCMFixture.with { fixture in
                let push = Self.sealed(
                    EnvelopeGoldenTests.push(token: "fcm-token-" + UUID().uuidString.lowercased(), platform: .fcm), preview: preview,
                    key: Self.sealingKey())
                #expect(await fixture.provider.send(push).kind == "sent")
                let request = try #require(fixture.delivered.first)
                sizes.append(request.body.count)
                let message = try JSONSerialization.jsonObject(with: request.body) as? [String: Any]
                let data = (message?["message"] as? [String: Any])?["data"] as? [String: Any]
                var values = try EnvelopeGoldenTests.fcmValues(push, request)
                values.merge(try Self.sealedValue(data?["secureSealed"] as? String)) { $1 }
                if let name { try GoldenEnvelope(name: name).expect(request, values: values) }
            }
        }
        #expect(sizes.count == 2 && sizes[0] == sizes[1], "sealed FCM bodies with and without a preview: \(sizes)")
    }

    @Test("Web Push sealed: the preview inside the encrypted message, its title and body shown; every record 3175 bytes")
    func webPush() async throws {
        var sizes: [Int] = []
        for (name, preview) in [("webpush-sealed", Self.preview), ("webpush-sealed-id-only", nil)] {
            try await WebPushFixture.with { fixture in
                var push = fixture.push(fixture.fake.subscribe())
                push.badge = EnvelopeGoldenTests.badge
                push.seal = PushSeal(previewJSON: preview, key: nil)
                let topic = push.notificationID.description.replacingOccurrences(of: "-", with: "")
                let delivery = try await EnvelopeGoldenTests.expectGolden(name, push, fixture: fixture, extra: ["topic": topic])
                sizes.append(delivery.request.body.count)
            }
        }
        #expect(sizes == [3175, 3175], "sealed Web Push records with and without a preview: \(sizes)")
    }

    @Test("a clear is never sealed, whatever the switch")
    func clearsStayClear() async throws {
        try await APNsFixture.with { fixture in
            var push = Self.sealed(
                EnvelopeGoldenTests.push(token: TestSupport.randomHexToken(), platform: .apns), preview: Self.preview, key: Self.sealingKey())
            push.kind = .clear([push.notificationID])
            #expect(await fixture.provider.send(push).kind == "sent")
            let request = try #require(fixture.delivered.first)
            let sealed = try Self.apnsSealed(request)
            #expect(sealed == nil)
        }
    }
}
