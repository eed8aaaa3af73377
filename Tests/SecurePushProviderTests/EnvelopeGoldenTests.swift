import Foundation
import SecurePushCore
import SecurePushFakes
import SecurePushProviders
import Testing

/// Every envelope profile, per platform and style, compared byte for byte with its golden file in
/// docs/envelopes/ as the fake server recorded it on the wire (docs/envelopes.md).
@Suite("Envelopes on the wire match docs/envelopes")
struct EnvelopeGoldenTests {
    /// The badge count the golden pushes carry.
    static let badge = 3

    static func push(token: String, platform: Platform, options: [String: String] = [:], badge: Int? = Self.badge) -> Push {
        var push = TestSupport.push(token: token, platform: platform, options: options, ttl: 3600)
        push.badge = badge
        return push
    }

    /// The values of the placeholders every golden file may use.
    static func values(_ push: Push, ttl: Int? = nil) -> [String: String] {
        var values = [
            "id": push.notificationID.description, "token": push.target.token,
            "expiration": String(Int(push.expiresAt.timeIntervalSince1970.rounded(.down))),
        ]
        if let ttl { values["ttl"] = String(ttl) }
        return values
    }

    /// A TTL the provider computed from the push's one-hour expiry.
    static func checkedTTL(_ text: String?, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
        let ttl = try #require(text.flatMap { Int($0) }, sourceLocation: sourceLocation)
        #expect((3590...3600).contains(ttl), "TTL \(ttl) s for a push expiring in an hour", sourceLocation: sourceLocation)
        return ttl
    }

    @Test("APNs alert, the default: generic text, mutable-content, badge, priority 10, expiration and collapse id")
    func apnsAlert() async throws {
        try await APNsFixture.with { fixture in
            let push = Self.push(token: TestSupport.randomHexToken(), platform: .apns)
            #expect(await fixture.provider.send(push).kind == "sent")
            let request = try #require(fixture.fake.delivered.first)
            var values = Self.values(push)
            values["jwt"] = String(request.header("authorization")?.dropFirst("bearer ".count) ?? "")
            try GoldenEnvelope(name: "apns-alert").expect(request, values: values)
        }
    }

    @Test("APNs alert with configured text and localization keys, without a badge")
    func apnsAlertLocalized() async throws {
        let alert = GenericAlert(title: "New secure message", body: "Tap to read it.", titleLocKey: "SECURE_TITLE", bodyLocKey: "SECURE_BODY")
        try await APNsFixture.with(alert: alert) { fixture in
            let push = Self.push(token: TestSupport.randomHexToken(), platform: .apns, badge: nil)
            #expect(await fixture.provider.send(push).kind == "sent")
            let request = try #require(fixture.fake.delivered.first)
            var values = Self.values(push)
            values["jwt"] = String(request.header("authorization")?.dropFirst("bearer ".count) ?? "")
            try GoldenEnvelope(name: "apns-alert-localized").expect(request, values: values)
        }
    }

    @Test("APNs silent (configured, or the device's push_style option): content-available, background, priority 5, no badge")
    func apnsSilent() async throws {
        try await APNsFixture.with { fixture in
            let push = Self.push(token: TestSupport.randomHexToken(), platform: .apns, options: ["push_style": "silent"])
            #expect(await fixture.provider.send(push).kind == "sent")
            let request = try #require(fixture.fake.delivered.first)
            var values = Self.values(push)
            values["jwt"] = String(request.header("authorization")?.dropFirst("bearer ".count) ?? "")
            try GoldenEnvelope(name: "apns-silent").expect(request, values: values)
        }
    }

    @Test("the simulated platform records the APNs alert envelope")
    func simulated() async throws {
        let outbox = try SimulatedOutbox(path: nil, keepInMemory: true)
        let push = Self.push(token: TestSupport.randomHexToken(), platform: .simulated)
        #expect(await SimulatedProvider(outbox: outbox).send(push).kind == "sent")
        let recorded = try #require(outbox.pushes.first)
        let request = FakeRequest(
            connectionID: 0, httpMajorVersion: 2, method: recorded.method, path: recorded.path,
            headers: recorded.headers.map { (name: $0.name, value: $0.value) }, body: Data(recorded.body.utf8))
        try GoldenEnvelope(name: "apns-alert").expect(request, values: Self.values(push), omitting: ["authorization", "content-type"])
    }

    static func fcmValues(_ push: Push, _ request: FakeRequest) throws -> [String: String] {
        let body = String(decoding: request.body, as: UTF8.self)
        let ttl = try #require(body.firstMatch(of: /"ttl":"([0-9]+)s"/)).1
        var values = values(push, ttl: try checkedTTL(String(ttl)))
        values["access-token"] = String(request.header("authorization")?.dropFirst("Bearer ".count) ?? "")
        return values
    }

    @Test("FCM: data-only, high priority, id and generic text in data, the APNs alert in the apns block")
    func fcm() async throws {
        try await FCMFixture.with { fixture in
            let push = Self.push(token: "fcm-token-" + UUID().uuidString.lowercased(), platform: .fcm)
            #expect(await fixture.provider.send(push).kind == "sent")
            let request = try #require(fixture.fake.delivered.first)
            try GoldenEnvelope(name: "fcm").expect(request, values: try Self.fcmValues(push, request))
        }
    }

    @Test("FCM with the silent APNs style: the apns block is a background push")
    func fcmSilent() async throws {
        try await FCMFixture.with(envelopes: EnvelopeSettings(apnsStyle: .silent)) { fixture in
            let push = Self.push(token: "fcm-token-" + UUID().uuidString.lowercased(), platform: .fcm)
            #expect(await fixture.provider.send(push).kind == "sent")
            let request = try #require(fixture.fake.delivered.first)
            try GoldenEnvelope(name: "fcm-apns-silent").expect(request, values: try Self.fcmValues(push, request))
        }
    }

    @Test("Web Push: a Declarative Web Push message (decrypted by the fake), TTL, Urgency, Topic, VAPID")
    func webPush() async throws {
        try await WebPushFixture.with { fixture in
            let subscription = fixture.fake.subscribe()
            var push = fixture.push(subscription)
            push.badge = Self.badge
            #expect(await fixture.provider.send(push).kind == "sent", "rejections: \(fixture.fake.rejections)")
            let delivery = try #require(fixture.fake.deliveries.first)
            var values = Self.values(push, ttl: try Self.checkedTTL(delivery.request.header("ttl")))
            values["endpoint"] = delivery.request.path
            values["topic"] = push.notificationID.description.replacingOccurrences(of: "-", with: "")
            values["jwt"] = delivery.vapidJWT
            values["vapid-key"] = delivery.vapidKey
            try GoldenEnvelope(name: "webpush").expect(delivery.request, body: delivery.plaintext, values: values)
            #expect(delivery.request.body.count <= GoldenEnvelope.maxBodyBytes, "the encrypted body fits 4 KiB too")
        }
    }

    @Test("WNS: raw, body = id, TTL, cache policy")
    func wns() async throws {
        try await WNSFixture.with { fixture in
            let push = Self.push(token: fixture.fake.makeChannelURI(), platform: .wns)
            #expect(await fixture.provider.send(push).kind == "sent")
            let request = try #require(fixture.fake.delivered.first)
            var values = Self.values(push, ttl: try Self.checkedTTL(request.header("x-wns-ttl")))
            values["channel"] = request.path
            values["access-token"] = String(request.header("authorization")?.dropFirst("Bearer ".count) ?? "")
            try GoldenEnvelope(name: "wns").expect(request, values: values)
        }
    }

    /// A read-sync clear of the push's own notification and an older one (`{id}` and `{older}`).
    static func clear(_ push: Push) -> (Push, older: NotificationID) {
        var clear = push
        let older = NotificationID(UUID())
        clear.kind = .clear([push.notificationID, older])
        return (clear, older)
    }

    @Test("clears (read sync): APNs background push with secureClear and the badge, no collapse id")
    func apnsClear() async throws {
        try await APNsFixture.with { fixture in
            let (push, older) = Self.clear(Self.push(token: TestSupport.randomHexToken(), platform: .apns))
            #expect(await fixture.provider.send(push).kind == "sent")
            let request = try #require(fixture.fake.delivered.first)
            var values = Self.values(push)
            values["older"] = older.description
            values["jwt"] = String(request.header("authorization")?.dropFirst("bearer ".count) ?? "")
            try GoldenEnvelope(name: "apns-clear").expect(request, values: values)
        }
    }

    @Test("clears (read sync): FCM normal priority, secureClear comma-separated, the apns block a background push")
    func fcmClear() async throws {
        try await FCMFixture.with { fixture in
            let (push, older) = Self.clear(Self.push(token: "fcm-token-" + UUID().uuidString.lowercased(), platform: .fcm))
            #expect(await fixture.provider.send(push).kind == "sent")
            let request = try #require(fixture.fake.delivered.first)
            var values = try Self.fcmValues(push, request)
            values["older"] = older.description
            try GoldenEnvelope(name: "fcm-clear").expect(request, values: values)
        }
    }

    @Test("clears (read sync): Web Push plain {secureClear}, Urgency low, no topic")
    func webPushClear() async throws {
        try await WebPushFixture.with { fixture in
            let subscription = fixture.fake.subscribe()
            let (push, older) = Self.clear(fixture.push(subscription))
            #expect(await fixture.provider.send(push).kind == "sent", "rejections: \(fixture.fake.rejections)")
            let delivery = try #require(fixture.fake.deliveries.first)
            var values = Self.values(push, ttl: try Self.checkedTTL(delivery.request.header("ttl")))
            values["older"] = older.description
            values["endpoint"] = delivery.request.path
            values["jwt"] = delivery.vapidJWT
            values["vapid-key"] = delivery.vapidKey
            try GoldenEnvelope(name: "webpush-clear").expect(delivery.request, body: delivery.plaintext, values: values)
        }
    }

    @Test("clears (read sync): WNS raw, body clear: and the ids")
    func wnsClear() async throws {
        try await WNSFixture.with { fixture in
            let (push, older) = Self.clear(Self.push(token: fixture.fake.makeChannelURI(), platform: .wns))
            #expect(await fixture.provider.send(push).kind == "sent")
            let request = try #require(fixture.fake.delivered.first)
            var values = Self.values(push, ttl: try Self.checkedTTL(request.header("x-wns-ttl")))
            values["older"] = older.description
            values["channel"] = request.path
            values["access-token"] = String(request.header("authorization")?.dropFirst("Bearer ".count) ?? "")
            try GoldenEnvelope(name: "wns-clear").expect(request, values: values)
        }
    }

    @Test("the largest configurable text still fits every platform's 4 KiB")
    func worstCaseSize() throws {
        let longest = String(repeating: "\"", count: GenericAlert.maxBytes)
        let settings = EnvelopeSettings(alert: GenericAlert(title: longest, body: longest, titleLocKey: longest, bodyLocKey: longest))
        var push = Self.push(token: String(repeating: "a", count: 256), platform: .fcm, badge: Int.max)
        push.target.options = ["project": String(repeating: "p", count: 64)]
        let apns = APNsEnvelope(settings: settings).request(for: push).body.count
        let fcm = FCMEnvelope(settings: settings, defaultProject: "p").request(for: push).body.count
        let webPush = WebPushEnvelope(settings: settings, navigateURL: "https://" + String(repeating: "n", count: 2000)).request(for: push).body.count
        // Web Push adds 86 bytes of header, 1 of padding delimiter and a 16-byte tag when encrypting.
        #expect(apns <= GoldenEnvelope.maxBodyBytes, "APNs \(apns) bytes")
        #expect(fcm <= GoldenEnvelope.maxBodyBytes, "FCM \(fcm) bytes")
        #expect(webPush + 103 <= GoldenEnvelope.maxBodyBytes, "Web Push \(webPush) bytes before encryption")
    }
}
