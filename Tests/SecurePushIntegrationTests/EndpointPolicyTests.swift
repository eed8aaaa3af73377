import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import PostgresNIO
import SecurePushFakes
import SecurePushTestSupport
import Testing

/// Server-side request forgery: device-supplied push URLs (Web Push endpoints, WNS channel URIs) that point
/// at the operator's own network are refused at registration and again at send time.
@Suite("Push endpoint policy: registration and dispatch")
struct EndpointPolicyTests {
    static let p256dh = "B" + String(repeating: "A", count: 86)
    static let auth = String(repeating: "A", count: 22)

    static func webPush(_ endpoint: String) -> String {
        #"{"platform":"webpush","subscription":{"endpoint":"\#(endpoint)","keys":{"p256dh":"\#(p256dh)","auth":"\#(auth)"}}}"#
    }

    static let refused: [(body: String, message: String)] = [
        (
            webPush("https://127.0.0.1:5432/x"),
            "The Web Push endpoint is refused: its host 127.0.0.1 is not a public address (loopback, 127.0.0.0/8)."
        ),
        (
            webPush("https://169.254.169.254/latest/meta-data"),
            "The Web Push endpoint is refused: its host 169.254.169.254 is not a public address (link-local, 169.254.0.0/16)."
        ),
        (webPush("https://10.0.0.1/x"), "The Web Push endpoint is refused: its host 10.0.0.1 is not a public address (private, 10.0.0.0/8)."),
        (webPush("https://[::1]/x"), "The Web Push endpoint is refused: its host ::1 is not a public address (loopback, ::1/128)."),
        (
            webPush("https://[::ffff:127.0.0.1]/x"),
            "The Web Push endpoint is refused: its host ::ffff:127.0.0.1 is not a public address (IPv4-mapped, ::ffff:0:0/96)."
        ),
        (
            webPush("https://127.1/x"),
            "The Web Push endpoint is refused: its host 127.1 is a numeric address not written as a dotted quad (a.b.c.d)."
        ),
        (webPush("https://localhost/x"), "The Web Push endpoint is refused: its host localhost is not in SECUREPUSH_WEBPUSH_ALLOWED_HOSTS."),
        (
            webPush("https://attacker.example.net/x"),
            "The Web Push endpoint is refused: its host attacker.example.net is not in SECUREPUSH_WEBPUSH_ALLOWED_HOSTS."
        ),
        (webPush("http://fcm.googleapis.com/fcm/send/x"), "The Web Push endpoint is refused: it is not an https URL."),
        (webPush("https://user:pw@fcm.googleapis.com/x"), "The Web Push endpoint is refused: it carries a user name or password."),
        // Another port of a public push service could only fail, slowly: it once held every user's pushes.
        (webPush("https://fcm.googleapis.com:8001/fcm/send/x"), "The Web Push endpoint is refused: its port 8001 is not fcm.googleapis.com's (443)."),
        (
            #"{"platform":"wns","token":"https://evil.example.com/?token=x"}"#,
            "The WNS channel URI is refused: its host evil.example.com is not in SECUREPUSH_WNS_ALLOWED_HOSTS."
        ),
        (
            #"{"platform":"wns","token":"https://10.0.0.1/?token=x"}"#,
            "The WNS channel URI is refused: its host 10.0.0.1 is not a public address (private, 10.0.0.0/8)."
        ),
    ]

    @Test("POST /v1/devices refuses the attacker's endpoints with 400 invalid_device and says why; public push services are accepted")
    func registration() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let token = try await api.userToken("eve")
            let post = { (body: String) in
                try await client.execute(uri: "/v1/devices", method: .post, headers: .bearer(token), body: ByteBuffer(string: body))
            }
            for (body, message) in Self.refused {
                let response = try await post(body)
                expectError(response, .badRequest, "invalid_device")
                #expect((response.body.json["error"] as? [String: Any])?["message"] as? String == message, "\(body)")
            }
            let stored: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.devices")
            #expect(stored == 0)

            for endpoint in [
                "https://fcm.googleapis.com/fcm/send/abc:def", "https://updates.push.services.mozilla.com/wpush/v2/abc",
                "https://web.push.apple.com/QHqR", "https://wns2-by3p.notify.windows.com/w/?token=abc",
            ] {
                #expect(try await post(Self.webPush(endpoint)).status == .created, "\(endpoint)")
            }
            #expect(try await post(#"{"platform":"wns","token":"https://db5p.notify.windows.com/?token=x"}"#).status == .created)
        }
    }

    @Test("an operator-allowed private network lets a self-hosted push server register")
    func allowedPrivateNetwork() async throws {
        try await TestDatabase.with { db in
            let environment = [
                "SECUREPUSH_WEBPUSH_ALLOWED_HOSTS": "10.8.0.5,ntfy.internal", "SECUREPUSH_PUSH_ALLOWED_PRIVATE_NETWORKS": "10.8.0.0/16",
            ]
            try await APIHarness.with(db, environment: environment) { api, client in
                let token = try await api.userToken("ursula")
                let post = { (body: String) in
                    try await client.execute(uri: "/v1/devices", method: .post, headers: .bearer(token), body: ByteBuffer(string: body))
                }
                #expect(try await post(Self.webPush("https://10.8.0.5/up/abc")).status == .created)
                #expect(try await post(Self.webPush("https://ntfy.internal/up/abc")).status == .created)
                let outside = try await post(Self.webPush("https://10.9.0.5/up/abc"))
                expectError(outside, .badRequest, "invalid_device")
                #expect(
                    (outside.body.json["error"] as? [String: Any])?["message"] as? String
                        == "The Web Push endpoint is refused: its host 10.9.0.5 is not a public address (private, 10.0.0.0/8).")
            }
        }
    }

    @Test("a stored endpoint the policy refuses is never requested: the device is deactivated and the reason recorded")
    func dispatchRefuses() async throws {
        try await TestDatabase.with { db in
            let fake = try await FakeWebPushServer.start()
            try await withShutdown(of: fake) {
                let vapid = try FakeCredentials.vapidKey()
                let cases = [
                    ("https://10.0.0.1/push/x", "Web Push endpoint refused: its host 10.0.0.1 is not a public address (private, 10.0.0.0/8)"),
                    (
                        "https://push.example.net/push/x",
                        "Web Push endpoint refused: its host push.example.net is not in SECUREPUSH_WEBPUSH_ALLOWED_HOSTS"
                    ),
                ]
                var devices: [(device: UUID, expected: Expected, label: String)] = []
                for (index, (endpoint, _)) in cases.enumerated() {
                    let subscription = fake.subscribe()
                    let options = #"{"p256dh":"\#(subscription.p256dh)","auth":"\#(subscription.auth)"}"#
                    let device = try await db.insertDevice(user: "ssrf-\(index)", platform: "webpush", token: endpoint, options: options)
                    _ = try await db.enqueue(user: "ssrf-\(index)", payload: "{}")
                    devices.append((device, .tokenInvalid, endpoint))
                }
                let rowsToCheck = devices
                try await withPlatformDispatcher(
                    db, platforms: "webpush", settings: FakeCredentials.environment(webPush: fake, vapidKeyFile: vapid.path)
                ) { _ in
                    try await expectOutcomes(db, rowsToCheck)
                }
                for (row, (_, reason)) in zip(devices, cases) {
                    let recorded: String? = try await db.scalar("SELECT last_error FROM securepush.delivery_log WHERE device_id = \(row.device)")
                    #expect(recorded == reason)
                }
                #expect(fake.requests.isEmpty)
            }
        }
    }
}
