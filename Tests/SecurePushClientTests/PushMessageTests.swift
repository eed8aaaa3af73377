import Foundation
import SecurePushClient
import Testing

@Suite("SecurePushClient: parsing pushes")
struct PushMessageTests {
    let id = UUID()
    let other = UUID()

    @Test("APNs userInfo: secureId, secureClear; anything else is not ours")
    func apns() {
        #expect(PushMessage(apnsUserInfo: ["aps": ["mutable-content": 1], "secureId": id.uuidString.lowercased()]) == .notification(id))
        #expect(
            PushMessage(apnsUserInfo: ["aps": ["content-available": 1], "secureClear": [id.uuidString, other.uuidString]]) == .clear([id, other]))
        #expect(PushMessage(apnsUserInfo: ["aps": ["alert": "hi"]]) == nil)
        #expect(PushMessage(apnsUserInfo: ["secureId": "not-a-uuid"]) == nil)
        #expect(PushMessage(apnsUserInfo: ["secureClear": ["junk"]]) == nil)
    }

    @Test("FCM data: string values, clears comma-separated")
    func fcm() {
        #expect(PushMessage(fcmData: ["secureId": id.uuidString, "title": "New notification"]) == .notification(id))
        #expect(PushMessage(fcmData: ["secureClear": "\(id.uuidString),\(other.uuidString)"]) == .clear([id, other]))
        #expect(PushMessage(fcmData: ["secureClear": "\(id.uuidString), junk"]) == .clear([id]))
        #expect(PushMessage(fcmData: [:]) == nil)
    }

    @Test("Web Push: the Declarative Web Push form and a plain message")
    func webPush() {
        let declarative =
            #"{"web_push":8030,"notification":{"title":"New notification","navigate":"https://app.example/","data":{"secureId":"\#(id)"}},"mutable":true}"#
        #expect(PushMessage(webPushData: Data(declarative.utf8)) == .notification(id))
        #expect(PushMessage(webPushData: Data(#"{"secureClear":["\#(id)"]}"#.utf8)) == .clear([id]))
        #expect(PushMessage(webPushData: Data("not json".utf8)) == nil)
    }

    @Test("WNS raw: the id, or clear: and ids")
    func wns() {
        #expect(PushMessage(wnsRaw: id.uuidString) == .notification(id))
        #expect(PushMessage(wnsRaw: "clear:\(id.uuidString),\(other.uuidString)") == .clear([id, other]))
        #expect(PushMessage(wnsRaw: "hello") == nil)
    }

    @Test("registration bodies carry the platform's fields")
    func registration() throws {
        let apns = DeviceRegistration.apns(token: Data([0xab, 0x01]), sandbox: true, topic: "com.example.app").with("push_style", "alert")
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(apns)) as? [String: String]
        #expect(json == ["platform": "apns", "token": "ab01", "environment": "sandbox", "topic": "com.example.app", "push_style": "alert"])
        let web = try JSONSerialization.jsonObject(
            with: JSONEncoder().encode(DeviceRegistration.webPush(endpoint: "https://e", p256dh: "p", auth: "a")))
        #expect((web as? [String: Any])?["platform"] as? String == "webpush")
    }

    @Test("an in-memory credential store keeps one credential")
    func store() throws {
        let store = InMemoryCredentialStore()
        #expect(try store.load() == nil)
        let credential = DeviceCredential(deviceID: id, secret: "s")
        try store.save(credential)
        #expect(try store.load() == credential)
        try store.delete()
        #expect(try store.load() == nil)
    }

    @Test("presentation: the collapse digest and urgency from each platform's push; the id when there is no digest")
    func presentation() throws {
        let digest = "0123456789abcdef0123456789abcdef"
        #expect(PushPresentation(apnsUserInfo: ["secureId": id.uuidString, "secureCollapse": digest]).collapseID == digest)
        #expect(PushPresentation(apnsUserInfo: ["secureId": id.uuidString]).identifier(for: id) == id.uuidString.lowercased())
        let fcm = PushPresentation(fcmData: ["secureId": id.uuidString, "secureCollapse": digest, "urgency": "passive"])
        #expect(fcm.collapseID == digest && fcm.urgency == "passive" && fcm.identifier(for: id) == digest)
        let web = Data(#"{"notification":{"data":{"secureId":"x","collapse":"\#(digest)","urgency":"time_sensitive"}},"web_push":8030}"#.utf8)
        #expect(PushPresentation(webPushData: web) == PushPresentation(fcmData: ["secureCollapse": digest, "urgency": "time_sensitive"]))
        #expect(PushPresentation(fcmData: ["secureCollapse": "not-a-digest"]).collapseID == nil, "only a digest's shape is taken")
    }
}
