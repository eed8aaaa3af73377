import Foundation
import PostgresNIO
import SecurePushClient
import SecurePushCore
import SecurePushDispatcher
import SecurePushFakes
import SecurePushStore
import SecurePushTestSupport
import Testing

/// Sealed previews end to end (docs/security.md): previews enqueued with SQL, a dispatcher with every real
/// provider and `SECUREPUSH_SEALED_PREVIEWS=on`, what each fake platform captured, and the Swift client opening
/// the captured APNs, FCM and WNS pushes with the device's key.
@Suite("Sealed previews through the dispatcher", .serialized)
struct SealedPreviewTests {
    /// The preview every platform must carry only sealed.
    static let preview = #"{"title":"Card payment","body":"€12.40 at Bakery"}"#
    /// Words of the preview that must not appear in any capture or log.
    static let previewWords = ["Card payment", "Bakery", "12.40"]

    /// Registers `key` as the device's sealing key, as `PUT /v1/devices/current/sealing-key` does.
    func setKey(_ db: TestDatabase, device: UUID, _ key: SealingKey) async throws {
        let sealPublic = ByteBuffer(bytes: try #require(Data(base64URLEncoded: key.publicKeyBase64URL)))
        let sealAuth = ByteBuffer(bytes: try #require(Data(base64URLEncoded: key.authBase64URL)))
        let set: Bool = try await db.scalar("SELECT securepush.set_sealing_key(\(device), \(sealPublic)::bytea, \(sealAuth)::bytea)")
        #expect(set)
    }

    func enqueue(_ db: TestDatabase, user: String, marker: String, preview: String?) async throws -> UUID {
        try await db.scalar(
            "SELECT securepush.enqueue(\(user), \(#"{"secret":"\#(marker)"}"#)::jsonb, preview => \(preview)::jsonb)")
    }

    @Test(
        "switch on: every sealed push of a platform has one size, opens to its preview with the device's key only, and no preview byte is captured or logged"
    )
    func sealedOnEveryPlatform() async throws {
        try await TestDatabase.with { db in
            try await FakePushServices.with { platforms in
                let (apns, fcm, webPush, wns) = (platforms.apns, platforms.fcm, platforms.webPush, platforms.wns)
                let (apnsKey, fcmKey, wnsKey, strangerKey) = (
                    SealingKey.generate(), SealingKey.generate(), SealingKey.generate(), SealingKey.generate()
                )
                let apnsToken = hexToken()
                let fcmToken = "fcm-token-" + UUID().uuidString.lowercased()
                try await setKey(db, device: try await db.insertDevice(user: "ada", platform: "apns", token: apnsToken), apnsKey)
                try await setKey(db, device: try await db.insertDevice(user: "ada", platform: "fcm", token: fcmToken), fcmKey)
                try await setKey(db, device: try await db.insertDevice(user: "ada", platform: "wns", token: wns.makeChannelURI()), wnsKey)
                let subscription = webPush.subscribe()
                try await db.insertDevice(
                    user: "ada", platform: "webpush", token: subscription.endpoint,
                    options: #"{"p256dh":"\#(subscription.p256dh)","auth":"\#(subscription.auth)"}"#)
                // A device without a key: id-only pushes, as without the switch.
                let keyless = hexToken()
                try await db.insertDevice(user: "ada", platform: "apns", token: keyless)

                let marker = "PAYLOAD-MARKER-\(UUID().uuidString)"
                // A preview of 1000 bytes is stored (the limit is 1024) but does not fit the 1024-byte bucket with the id.
                let large = #"{"title":"Card payment","body":"\#(String(repeating: "x", count: 960))"}"#
                let withPreview = try await enqueue(db, user: "ada", marker: marker, preview: Self.preview)
                let without = try await enqueue(db, user: "ada", marker: marker, preview: nil)
                let tooLarge = try await enqueue(db, user: "ada", marker: marker, preview: large)
                let ids = [withPreview, without, tooLarge]

                var configuration = platformTestConfiguration
                configuration.sealedPreviews = true
                let logs = CapturedLogs()
                try await withPlatformDispatcher(
                    db, platforms: "apns,fcm,webpush,wns", settings: platforms.settings, dispatcher: configuration, logs: logs
                ) {
                    _ in
                    try await db.eventually("15 pushes", timeout: .seconds(30)) {
                        apns.delivered.count == 6 && fcm.delivered.count == 3 && webPush.deliveries.count == 3 && wns.delivered.count == 3
                    }
                }

                // APNs: the sealed device's three bodies have one size; each opens with its key to its own id.
                let sealedAPNs = apns.delivered.filter { $0.path.hasSuffix(apnsToken) }
                let keylessAPNs = apns.delivered.filter { $0.path.hasSuffix(keyless) }
                #expect(sealedAPNs.count == 3 && keylessAPNs.count == 3)
                #expect(Set(sealedAPNs.map(\.body.count)).count == 1, "sealed APNs bodies: \(sealedAPNs.map(\.body.count))")
                var opened: [UUID: SealedPreview] = [:]
                for request in sealedAPNs {
                    let userInfo = try #require(try JSONSerialization.jsonObject(with: request.body) as? [String: Any])
                    #expect((userInfo["secureSealed"] as? String)?.count == 1503)
                    guard case .sealed(let id, let sealed)? = PushMessage(apnsUserInfo: userInfo) else {
                        Issue.record("an APNs push to a device with a key is not sealed")
                        continue
                    }
                    opened[id] = try sealed.open(with: apnsKey)
                    #expect(throws: SealedPushError.self, "another device's key cannot open it") { try sealed.open(with: strangerKey) }
                    #expect(throws: SealedPushError.self, "nor the FCM device's") { try sealed.open(with: fcmKey) }
                }
                #expect(opened[withPreview]?.title == "Card payment" && opened[withPreview]?.body == "€12.40 at Bakery")
                #expect(opened[without] != nil && opened[without]?.preview == nil, "without a preview: sealed id-only")
                #expect(opened[tooLarge] != nil && opened[tooLarge]?.preview == nil, "a preview too large for the bucket stays home")
                for request in keylessAPNs {
                    let userInfo = try #require(try JSONSerialization.jsonObject(with: request.body) as? [String: Any])
                    #expect(userInfo["secureSealed"] == nil, "a device without a key gets id-only pushes")
                    #expect(request.body.count < sealedAPNs[0].body.count)
                }

                // FCM: one size; the data message opens with the FCM device's key.
                #expect(Set(fcm.delivered.map(\.body.count)).count == 1, "FCM bodies: \(fcm.delivered.map(\.body.count))")
                var fcmOpened: [UUID: SealedPreview] = [:]
                for request in fcm.delivered {
                    let message = try #require(try JSONSerialization.jsonObject(with: request.body) as? [String: Any])
                    let data = try #require((message["message"] as? [String: Any])?["data"] as? [String: String])
                    guard case .sealed(let id, let sealed)? = PushMessage(fcmData: data) else {
                        Issue.record("an FCM push to a device with a key is not sealed")
                        continue
                    }
                    fcmOpened[id] = try sealed.open(with: fcmKey)
                    #expect(throws: SealedPushError.self) { try sealed.open(with: apnsKey) }
                }
                #expect(fcmOpened[withPreview]?.title == "Card payment" && fcmOpened[withPreview]?.body == "€12.40 at Bakery")

                // WNS: one size; the raw body opens with the WNS device's key.
                #expect(Set(wns.delivered.map(\.body.count)).count == 1, "WNS bodies: \(wns.delivered.map(\.body.count))")
                var wnsOpened: [UUID: SealedPreview] = [:]
                for request in wns.delivered {
                    guard case .sealed(let id, let sealed)? = PushMessage(wnsRaw: String(decoding: request.body, as: UTF8.self)) else {
                        Issue.record("a WNS push to a device with a key is not sealed")
                        continue
                    }
                    wnsOpened[id] = try sealed.open(with: wnsKey)
                }
                #expect(wnsOpened[withPreview]?.body == "€12.40 at Bakery")

                // Web Push: the preview travels inside the encrypted message, padded: every record is 3175 bytes.
                #expect(webPush.deliveries.map(\.request.body.count) == [3175, 3175, 3175])
                let shown = try webPush.deliveries.map { delivery -> (id: String, title: String, preview: Bool) in
                    let message = try #require(try JSONSerialization.jsonObject(with: delivery.plaintext) as? [String: Any])
                    let notification = try #require(message["notification"] as? [String: Any])
                    let data = try #require(notification["data"] as? [String: Any])
                    return (try #require(data["secureId"] as? String), try #require(notification["title"] as? String), data["preview"] != nil)
                }
                let previewed = try #require(shown.first { $0.id == withPreview.uuidString.lowercased() })
                #expect(previewed.title == "Card payment" && previewed.preview)
                // Web Push's bucket (3072 bytes of message) holds any preview the database accepts, the 1000-byte one too.
                #expect(shown.map(\.preview) == shown.map { $0.id != without.uuidString.lowercased() }, "\(shown)")

                // No preview or payload byte in any capture (Web Push: the ciphertext the push service saw) or log line.
                var captures = apns.delivered.map(\.body) + fcm.delivered.map(\.body) + wns.delivered.map(\.body)
                captures += webPush.deliveries.map(\.request.body)
                let headers = (apns.delivered + fcm.delivered + wns.delivered).flatMap { $0.headers.map { "\($0.name): \($0.value)" } }
                for capture in captures.map({ String(decoding: $0, as: UTF8.self) }) + headers + logs.all {
                    for word in Self.previewWords + [marker, String(repeating: "x", count: 64)] {
                        #expect(!capture.contains(word), "a capture or log line carries \(word)")
                    }
                }
                #expect(ids.count == 3)
            }
        }
    }

    @Test("switch off: previews are stored and returned but never pushed; pushes are exactly id-only")
    func switchOff() async throws {
        try await TestDatabase.with { db in
            try await FakePushServices.with { platforms in
                let key = SealingKey.generate()
                try await setKey(db, device: try await db.insertDevice(user: "bo", platform: "apns", token: hexToken()), key)
                let subscription = platforms.webPush.subscribe()
                try await db.insertDevice(
                    user: "bo", platform: "webpush", token: subscription.endpoint,
                    options: #"{"p256dh":"\#(subscription.p256dh)","auth":"\#(subscription.auth)"}"#)
                let id = try await enqueue(db, user: "bo", marker: "m", preview: Self.preview)
                try await withPlatformDispatcher(db, platforms: "apns,webpush", settings: platforms.settings) { _ in
                    try await db.eventually("2 pushes", timeout: .seconds(30)) {
                        platforms.apns.delivered.count == 1 && platforms.webPush.deliveries.count == 1
                    }
                }
                let userInfo = try #require(try JSONSerialization.jsonObject(with: platforms.apns.delivered[0].body) as? [String: Any])
                #expect(userInfo["secureSealed"] == nil)
                #expect(PushMessage(apnsUserInfo: userInfo) == .notification(id))
                let plaintext = String(decoding: platforms.webPush.deliveries[0].plaintext, as: UTF8.self)
                #expect(!plaintext.contains("preview") && !plaintext.contains("Card payment"))
                #expect(platforms.webPush.deliveries[0].request.body.count == platforms.webPush.deliveries[0].plaintext.count + 103, "not padded")
                let stored: String? = try await db.scalar("SELECT preview::text FROM securepush.notifications WHERE id = \(id)")
                #expect(stored?.contains("Card payment") == true)
            }
        }
    }
}
