import Foundation
import SecurePushCore
import SecurePushProviders
import Testing

@Suite("APNs envelope")
struct APNsEnvelopeTests {
    let push = Push(
        notificationID: NotificationID(UUID()),
        target: PushTarget(deviceID: UUID(), platform: .apns, token: "abcd"),
        expiresAt: Date().addingTimeInterval(60)
    )

    @Test("the alert form is valid JSON whatever the configured text contains")
    func alertTextIsEscaped() throws {
        let title = "Say \"hi\" \\ now ü/€ \u{1F512}"
        let profile = APNsEnvelope(settings: EnvelopeSettings(alert: GenericAlert(title: title, body: "Open the app"), apnsStyle: .alert))
        let request = profile.request(for: push)
        let object = try #require(try JSONSerialization.jsonObject(with: request.body) as? [String: Any])
        let aps = try #require(object["aps"] as? [String: Any])
        let alert = try #require(aps["alert"] as? [String: Any])
        #expect(alert["title"] as? String == title)
        #expect(alert["body"] as? String == "Open the app")
        #expect(aps["mutable-content"] as? Int == 1)
        #expect(object["secureId"] as? String == push.notificationID.description)
        #expect(Set(object.keys) == ["aps", "secureId"])
    }

    @Test("the default is the alert form; the silent form is exactly the id")
    func styles() {
        let alert = APNsEnvelope().request(for: push)
        #expect(alert.header("apns-push-type") == "alert")
        #expect(alert.header("apns-priority") == "10")
        let silent = APNsEnvelope(settings: EnvelopeSettings(apnsStyle: .silent)).request(for: push)
        #expect(String(decoding: silent.body, as: UTF8.self) == #"{"aps":{"content-available":1},"secureId":"\#(push.notificationID)"}"#)
        #expect(silent.header("apns-push-type") == "background")
        #expect(silent.header("apns-priority") == "5")
    }

    @Test("a device's push_style option overrides the configured style either way")
    func deviceStyle() {
        var silentDevice = push
        silentDevice.target.options = ["push_style": "silent"]
        #expect(APNsEnvelope().request(for: silentDevice).header("apns-push-type") == "background")
        var alertDevice = push
        alertDevice.target.options = ["push_style": "alert"]
        #expect(APNsEnvelope(settings: EnvelopeSettings(apnsStyle: .silent)).request(for: alertDevice).header("apns-push-type") == "alert")
    }

    @Test("the badge is the push's count, only in the alert form; no count, no badge")
    func badge() throws {
        var counted = push
        counted.badge = 7
        let alert = try #require(try JSONSerialization.jsonObject(with: APNsEnvelope().request(for: counted).body) as? [String: Any])
        #expect((alert["aps"] as? [String: Any])?["badge"] as? Int == 7)
        let silent = APNsEnvelope(settings: EnvelopeSettings(apnsStyle: .silent)).request(for: counted)
        #expect(!String(decoding: silent.body, as: UTF8.self).contains("badge"))
        let uncounted = try #require(try JSONSerialization.jsonObject(with: APNsEnvelope().request(for: push).body) as? [String: Any])
        #expect((uncounted["aps"] as? [String: Any])?["badge"] == nil)
    }
}
