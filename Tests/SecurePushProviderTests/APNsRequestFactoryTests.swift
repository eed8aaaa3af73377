import Foundation
import SecurePushCore
import SecurePushProviders
import Testing

@Suite("APNs request bodies")
struct APNsRequestFactoryTests {
    let push = Push(
        notificationID: NotificationID(UUID()),
        target: PushTarget(deviceID: UUID(), platform: .apns, token: "abcd"),
        expiresAt: Date().addingTimeInterval(60)
    )

    @Test("the alert form is valid JSON whatever the configured text contains")
    func alertTextIsEscaped() throws {
        let title = "Say \"hi\" \\ now\n\t\u{01}ü/€"
        let factory = APNsRequestFactory(alertTitle: title, alertBody: "Open the app", defaultStyle: .alert)
        let request = factory.makeRequest(for: push)
        let object = try #require(try JSONSerialization.jsonObject(with: request.body) as? [String: Any])
        let aps = try #require(object["aps"] as? [String: Any])
        let alert = try #require(aps["alert"] as? [String: Any])
        #expect(alert["title"] as? String == title)
        #expect(alert["body"] as? String == "Open the app")
        #expect(aps["mutable-content"] as? Int == 1)
        #expect(object["secureId"] as? String == push.notificationID.description)
        #expect(Set(object.keys) == ["aps", "secureId"])
    }

    @Test("the silent form is exactly the id")
    func silentBody() {
        let request = APNsRequestFactory().makeRequest(for: push)
        #expect(String(decoding: request.body, as: UTF8.self) == #"{"aps":{"content-available":1},"secureId":"\#(push.notificationID)"}"#)
    }
}
