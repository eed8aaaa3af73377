import Foundation
import SecurePushClient
import SecurePushProviders
import Testing

/// Records sealed as the server seals them: `WebPushEncryption` (RFC 8291), padded to the 1024-byte bucket.
enum Sealer {
    static func seal(_ plaintext: String, to key: SealingKey) throws -> String {
        let record = try WebPushEncryption.encrypt(
            Data(plaintext.utf8), userAgentPublicKey: try data(key.publicKeyBase64URL), authSecret: try data(key.authBase64URL), paddedTo: 1024)
        return base64URL(record)
    }

    static func content(_ id: UUID, preview: String? = #"{"title":"Card payment","body":"€12.40 at Bakery"}"#) -> String {
        let id = id.uuidString.lowercased()
        return preview.map { #"{"id":"\#(id)","preview":\#($0)}"# } ?? #"{"id":"\#(id)"}"#
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func data(_ base64URL: String) throws -> Data {
        var text = base64URL.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        return try #require(Data(base64Encoded: text))
    }
}

@Suite("SecurePushClient: sealed previews")
struct SealedPushTests {
    let id = UUID()
    let key = SealingKey.generate()

    func sealed(_ push: PushMessage?) throws -> SealedPush {
        guard case .sealed(let pushID, let sealed) = push else { throw SealedPushError.notSealed }
        #expect(pushID == id && sealed.id == id)
        return sealed
    }

    @Test("a sealed APNs push parses to .sealed and opens with the device's key: title and body, here and through the client")
    func apns() throws {
        let userInfo: [AnyHashable: Any] = [
            "aps": ["alert": ["title": "New notification"], "mutable-content": 1],
            "secureId": id.uuidString.lowercased(), "secureSealed": try Sealer.seal(Sealer.content(id), to: key),
        ]
        let opened = try sealed(PushMessage(apnsUserInfo: userInfo)).open(with: key)
        #expect(opened.id == id && opened.title == "Card payment" && opened.body == "€12.40 at Bakery")
        #expect(opened.preview == ["title": .string("Card payment"), "body": .string("€12.40 at Bakery")])
        let credential = DeviceCredential(deviceID: UUID(), secret: "s", sealingKey: key)
        let client = SecurePushClient(baseURL: URL(string: "https://push.example")!, credentials: InMemoryCredentialStore(credential))
        let message = try #require(PushMessage(apnsUserInfo: userInfo))
        #expect(try client.openSealed(message) == opened)
        #expect(message.notificationID == id && PushMessage.clear([id]).notificationID == nil)
    }

    @Test("a sealed FCM data message parses to .sealed and opens with the device's key")
    func fcm() throws {
        let data = ["secureId": id.uuidString.lowercased(), "secureSealed": try Sealer.seal(Sealer.content(id), to: key)]
        let opened = try sealed(PushMessage(fcmData: data)).open(with: key)
        #expect(opened.title == "Card payment" && opened.body == "€12.40 at Bakery")
    }

    @Test("a WNS raw body sealed:<id>:<record> parses to .sealed; a damaged record leaves the id")
    func wns() throws {
        let record = try Sealer.seal(Sealer.content(id), to: key)
        let opened = try sealed(PushMessage(wnsRaw: "sealed:\(id.uuidString.lowercased()):\(record)\n")).open(with: key)
        #expect(opened.title == "Card payment")
        #expect(PushMessage(wnsRaw: "sealed:\(id.uuidString):not a record") == .notification(id))
        #expect(PushMessage(wnsRaw: "sealed:\(id.uuidString)") == .notification(id))
        #expect(PushMessage(wnsRaw: "sealed:junk:\(record)") == nil)
    }

    @Test("a malformed secureSealed falls back to .notification(id); Web Push previews stay the browser's")
    func fallback() throws {
        let record = try Sealer.seal(Sealer.content(id), to: key)
        #expect(PushMessage(apnsUserInfo: ["secureId": id.uuidString, "secureSealed": "!!!"]) == .notification(id))
        #expect(PushMessage(apnsUserInfo: ["secureId": id.uuidString, "secureSealed": 42]) == .notification(id))
        #expect(PushMessage(fcmData: ["secureId": id.uuidString, "secureSealed": String(record.prefix(100))]) == .notification(id))
        #expect(PushMessage(fcmData: ["secureSealed": record]) == nil, "no id, not ours")
        let web = #"{"web_push":8030,"notification":{"title":"Card payment","data":{"secureId":"\#(id)","preview":{"title":"Card payment"}}}}"#
        #expect(PushMessage(webPushData: Data(web.utf8)) == .notification(id))
    }

    @Test("another device's key cannot open it")
    func otherKey() throws {
        let push = try sealed(PushMessage(fcmData: ["secureId": id.uuidString, "secureSealed": try Sealer.seal(Sealer.content(id), to: key)]))
        #expect(throws: SealedPushError.cannotDecrypt) { try push.open(with: SealingKey.generate()) }
    }

    @Test("content naming another id than the push's is refused")
    func idMismatch() throws {
        let record = try Sealer.seal(Sealer.content(UUID()), to: key)
        let push = try sealed(PushMessage(apnsUserInfo: ["secureId": id.uuidString, "secureSealed": record]))
        #expect(throws: SealedPushError.idMismatch) { try push.open(with: key) }
    }

    @Test("a push sealed id-only opens with no preview")
    func idOnly() throws {
        let push = try sealed(
            PushMessage(fcmData: ["secureId": id.uuidString, "secureSealed": try Sealer.seal(Sealer.content(id, preview: nil), to: key)]))
        let opened = try push.open(with: key)
        #expect(opened == SealedPreview(id: id, preview: nil) && opened.title == nil && opened.body == nil)
    }

    @Test("every record is 1127 bytes, 1503 base64url characters, with or without a preview")
    func size() throws {
        for content in [
            Sealer.content(id), Sealer.content(id, preview: nil), Sealer.content(id, preview: #"{"body":"\#(String(repeating: "x", count: 900))"}"#),
        ] {
            let text = try Sealer.seal(content, to: key)
            #expect(text.count == 1503)
            #expect(try Sealer.data(text).count == 1127)
            #expect(try SealedPush(id: id, record: Sealer.data(text)).open(with: key).id == id)
        }
    }

    @Test("truncated, garbled or foreign content throws, never traps")
    func garbled() throws {
        let record = try Sealer.data(Sealer.seal(Sealer.content(id), to: key))
        func open(_ bytes: Data) throws(SealedPushError) { _ = try SealedPush(id: id, record: bytes).open(with: key) }
        #expect(throws: SealedPushError.malformedRecord) { try open(Data()) }
        #expect(throws: SealedPushError.malformedRecord) { try open(record.prefix(90)) }
        #expect(throws: SealedPushError.cannotDecrypt) { try open(record.dropLast()) }
        for index in [0, 30, 100, 600, record.count - 1] {
            var flipped = record
            flipped[index] ^= 0x40
            #expect(throws: SealedPushError.cannotDecrypt) { try open(flipped) }
        }
        var idlen = record
        idlen[20] = 64
        #expect(throws: SealedPushError.malformedRecord) { try open(idlen) }
        var small = record
        small.replaceSubrange(16..<20, with: [0, 0, 1, 0])  // a record size of 256: more than one record
        #expect(throws: SealedPushError.malformedRecord) { try open(small) }
        #expect(throws: (any Error).self) { try open(Data((0..<1127).map { _ in UInt8.random(in: 0...255) })) }
        #expect(throws: SealedPushError.malformedContent) { try open(Sealer.data(Sealer.seal("not json", to: self.key))) }
        #expect(throws: SealedPushError.malformedContent) {
            try open(Sealer.data(Sealer.seal(#"{"id":"\#(self.id)","preview":"text"}"#, to: self.key)))
        }
    }

    @Test("openSealed: not a sealed push, or no stored key, is a clear error")
    func clientErrors() throws {
        let push = try sealed(PushMessage(fcmData: ["secureId": id.uuidString, "secureSealed": try Sealer.seal(Sealer.content(id), to: key)]))
        let keyless = SecurePushClient(
            baseURL: URL(string: "https://push.example")!, credentials: InMemoryCredentialStore(DeviceCredential(deviceID: id, secret: "s")))
        #expect(throws: SealedPushError.noSealingKey) { try keyless.openSealed(.sealed(self.id, push)) }
        #expect(throws: SealedPushError.notSealed) { try keyless.openSealed(.notification(self.id)) }
        let unregistered = SecurePushClient(baseURL: URL(string: "https://push.example")!, credentials: InMemoryCredentialStore())
        #expect(throws: SealedPushError.noSealingKey) { try unregistered.openSealed(.sealed(self.id, push)) }
    }

    @Test("a credential with its sealing key round-trips through JSON; one stored before sealed previews decodes without")
    func credentialJSON() throws {
        let credential = DeviceCredential(deviceID: id, secret: "s", sealingKey: key)
        let decoded = try JSONDecoder().decode(DeviceCredential.self, from: JSONEncoder().encode(credential))
        #expect(decoded == credential && decoded.sealingKey?.publicKeyBase64URL == key.publicKeyBase64URL)
        #expect(try Sealer.data(key.publicKeyBase64URL).count == 65 && Sealer.data(key.authBase64URL).count == 16)
        let old = try JSONDecoder().decode(DeviceCredential.self, from: Data(#"{"deviceID":"\#(id)","secret":"s"}"#.utf8))
        #expect(old == DeviceCredential(deviceID: id, secret: "s") && old.sealingKey == nil)
        let broken = Data(#"{"deviceID":"\#(id)","secret":"s","sealingKey":{"privateKey":"AAAA","auth":"AAAA"}}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(DeviceCredential.self, from: broken) }
    }
}
