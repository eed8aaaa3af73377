import Foundation
import SecurePushDispatcher
import SecurePushServer
import Testing

@Suite("Outcome webhook settings and signature")
struct WebhookSettingsTests {
    let base = ["DATABASE_URL": "postgres://app:s3cret@db.internal:5433/push"]
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

    func message(_ extra: [String: String]) -> String? {
        do {
            _ = try SecurePushConfiguration(environment: base.merging(extra) { $1 })
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test("the Standard Webhooks specification's example signs to its published signature")
    func standardWebhooksVector() throws {
        let signer = try WebhookSignature(secret: secret)
        let body = Array(#"{"test": 2432232314}"#.utf8)
        #expect(
            signer.sign(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: body) == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        )
    }

    @Test("off by default; a URL needs a secret of the whsec_ form, https or loopback http; each error names the variable")
    func settings() throws {
        #expect(try SecurePushConfiguration(environment: base).webhook == nil)
        let on = try SecurePushConfiguration(
            environment: base.merging(["SECUREPUSH_WEBHOOK_URL": "https://hooks.example.com/securepush", "SECUREPUSH_WEBHOOK_SECRET": secret]) { $1 })
        #expect(on.webhook?.batch == 100)
        #expect(on.webhook?.timeout == .seconds(10))
        #expect(on.webhook?.retryMax == .seconds(300))
        #expect(message(["SECUREPUSH_WEBHOOK_URL": "https://hooks.example.com/x"])?.contains("SECUREPUSH_WEBHOOK_SECRET") == true)
        #expect(message(["SECUREPUSH_WEBHOOK_SECRET": secret])?.contains("SECUREPUSH_WEBHOOK_URL") == true)
        #expect(
            message(["SECUREPUSH_WEBHOOK_URL": "http://hooks.example.com/x", "SECUREPUSH_WEBHOOK_SECRET": secret])?.contains("must be https") == true)
        #expect(message(["SECUREPUSH_WEBHOOK_URL": "http://127.0.0.1:9000/x", "SECUREPUSH_WEBHOOK_SECRET": secret]) == nil)
        for weak in ["plain-secret", "whsec_c2hvcnQ=", "whsec_!!!"] {
            #expect(
                message(["SECUREPUSH_WEBHOOK_URL": "https://hooks.example.com/x", "SECUREPUSH_WEBHOOK_SECRET": weak])?.contains("whsec_") == true,
                "\(weak)")
        }
        #expect(
            message(["SECUREPUSH_WEBHOOK_URL": "https://h.example.com/x", "SECUREPUSH_WEBHOOK_SECRET": secret, "SECUREPUSH_WEBHOOK_BATCH": "0"])?
                .contains("SECUREPUSH_WEBHOOK_BATCH") == true)
    }
}
