import Crypto
import Foundation
import SecurePushCore
import SecurePushDispatcher
import SecurePushProviders
import SecurePushServer
import Testing

/// `SECUREPUSH_ALERT_*`, `SECUREPUSH_APNS_PUSH_STYLE`, `SECUREPUSH_BADGE` and `SECUREPUSH_WEBPUSH_NAVIGATE_URL`.
@Suite("Envelope settings")
struct EnvelopeSettingsTests {
    static func envelopes(_ extra: [String: String]) throws -> EnvelopeSettings {
        try ProviderSettingsTests.configuration(extra).providerSettings.envelopes
    }

    @Test("defaults: generic English text, the alert style, the unread badge")
    func defaults() throws {
        let configuration = try ProviderSettingsTests.configuration([:])
        #expect(configuration.providerSettings.envelopes == EnvelopeSettings(alert: GenericAlert(), apnsStyle: .alert))
        #expect(configuration.providerSettings.envelopes.alert.title == "New notification")
        #expect(configuration.dispatcher.unreadBadge)
        #expect(try !ProviderSettingsTests.configuration(["SECUREPUSH_BADGE": "off"]).dispatcher.unreadBadge)
    }

    @Test("text, localization keys and style are read whichever platforms are enabled (the simulated one uses them)")
    func configured() throws {
        let settings = try Self.envelopes([
            "SECUREPUSH_PROVIDERS": "simulated", "SECUREPUSH_ALERT_TITLE": "Neue Nachricht", "SECUREPUSH_ALERT_BODY": "Zum Lesen tippen.",
            "SECUREPUSH_ALERT_TITLE_LOC_KEY": "SECURE_TITLE", "SECUREPUSH_ALERT_LOC_KEY": "SECURE_BODY", "SECUREPUSH_APNS_PUSH_STYLE": "SILENT",
        ])
        #expect(
            settings
                == EnvelopeSettings(
                    alert: GenericAlert(title: "Neue Nachricht", body: "Zum Lesen tippen.", titleLocKey: "SECURE_TITLE", bodyLocKey: "SECURE_BODY"),
                    apnsStyle: .silent))
    }

    @Test("bad values stop start-up with a message naming the setting")
    func badValues() {
        let cases: [([String: String], String)] = [
            (["SECUREPUSH_ALERT_TITLE": String(repeating: "é", count: 81)], "SECUREPUSH_ALERT_TITLE must be at most 160 bytes of UTF-8, got 162"),
            (["SECUREPUSH_ALERT_BODY": "line one\nline two"], "SECUREPUSH_ALERT_BODY must not contain control characters"),
            (["SECUREPUSH_ALERT_LOC_KEY": String(repeating: "K", count: 161)], "SECUREPUSH_ALERT_LOC_KEY must be at most 160 bytes"),
            (["SECUREPUSH_APNS_PUSH_STYLE": "loud"], "SECUREPUSH_APNS_PUSH_STYLE must be one of alert, silent, got \"loud\""),
            (["SECUREPUSH_BADGE": "total"], "SECUREPUSH_BADGE must be one of unread, off, got \"total\""),
            (["SECUREPUSH_APNS_ALERT_TITLE": "Hi"], "SECUREPUSH_APNS_ALERT_TITLE was renamed SECUREPUSH_ALERT_TITLE"),
            (["SECUREPUSH_APNS_ALERT_BODY": "Hi"], "SECUREPUSH_APNS_ALERT_BODY was renamed SECUREPUSH_ALERT_BODY"),
        ]
        for (environment, prefix) in cases {
            let message = ProviderSettingsTests.message(environment)
            #expect(message?.hasPrefix(prefix) == true, "\(message ?? "no error")")
        }
    }

    @Test("the Web Push navigate URL must be https; {id} stands for the id")
    func navigateURL() throws {
        let vapid = try TestSupport.temporaryFile(P256.Signing.PrivateKey().pemRepresentation)
        let base = [
            "SECUREPUSH_PROVIDERS": "webpush", "SECUREPUSH_WEBPUSH_VAPID_KEY_FILE": vapid, "SECUREPUSH_WEBPUSH_SUBJECT": "mailto:ops@example.com",
        ]
        for bad in [
            "http://app.example.com/", "app.example.com/n", "https:///n", "https://user:pw@app.example.com/",
            "https://app.example.com/\(String(repeating: "x", count: 2048))",
        ] {
            let message = ProviderSettingsTests.message(base.merging(["SECUREPUSH_WEBPUSH_NAVIGATE_URL": bad]) { $1 })
            #expect(message?.hasPrefix("SECUREPUSH_WEBPUSH_NAVIGATE_URL must be an https URL") == true, "\(bad): \(message ?? "no error")")
        }
        let webPush = try #require(
            try ProviderSettingsTests.configuration(base.merging(["SECUREPUSH_WEBPUSH_NAVIGATE_URL": "https://app.example.com/inbox/{id}"]) { $1 })
                .providerSettings.webPush)
        let push = TestSupport.push(token: "https://push.example/x", platform: .webpush)
        let plaintext = String(decoding: webPush.envelope.request(for: push).body, as: UTF8.self)
        #expect(plaintext.contains(#""navigate":"https://app.example.com/inbox/\#(push.notificationID)""#))
    }
}
