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

    /// Sends `push` through the fixture's provider, expects it sent, and compares the first request the fake
    /// accepted with the golden file `name`; the placeholders are `placeholders(request)` and `extra`.
    static func expectGolden(
        _ name: String, _ push: Push, fixture: some RecordingFixture, extra: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation, placeholders: (FakeRequest) throws -> [String: String]
    ) async throws {
        #expect(await fixture.provider.send(push).kind == "sent", sourceLocation: sourceLocation)
        let request = try #require(fixture.delivered.first, sourceLocation: sourceLocation)
        let values = try placeholders(request).merging(extra) { $1 }
        try GoldenEnvelope(name: name).expect(request, values: values, sourceLocation: sourceLocation)
    }

    /// The placeholders of an APNs golden file: the common ones and the request's JWT.
    static func apnsValues(_ push: Push, _ request: FakeRequest) -> [String: String] {
        var values = Self.values(push)
        values["jwt"] = String(request.header("authorization")?.dropFirst("bearer ".count) ?? "")
        return values
    }

    /// The placeholders of an FCM golden file: the common ones with the TTL (read from the body) and the access token.
    static func fcmValues(_ push: Push, _ request: FakeRequest) throws -> [String: String] {
        let body = String(decoding: request.body, as: UTF8.self)
        let ttl = try #require(body.firstMatch(of: /"ttl":"([0-9]+)s"/)).1
        var values = values(push, ttl: try checkedTTL(String(ttl)))
        values["access-token"] = String(request.header("authorization")?.dropFirst("Bearer ".count) ?? "")
        return values
    }

    /// Sends `push` through the Web Push fixture and compares the delivery the fake decrypted with the golden
    /// file `name`; the placeholders are the common ones with the TTL, the endpoint, VAPID's JWT and key, and
    /// `extra`. Returns the delivery.
    @discardableResult
    static func expectGolden(
        _ name: String, _ push: Push, fixture: WebPushFixture, extra: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> FakeWebPushServer.Delivery {
        #expect(await fixture.provider.send(push).kind == "sent", "rejections: \(fixture.fake.rejections)", sourceLocation: sourceLocation)
        let delivery = try #require(fixture.fake.deliveries.first, sourceLocation: sourceLocation)
        var values = Self.values(push, ttl: try Self.checkedTTL(delivery.request.header("ttl"), sourceLocation: sourceLocation))
        values.merge(extra) { $1 }
        values["endpoint"] = delivery.request.path
        values["jwt"] = delivery.vapidJWT
        values["vapid-key"] = delivery.vapidKey
        try GoldenEnvelope(name: name).expect(delivery.request, body: delivery.plaintext, values: values, sourceLocation: sourceLocation)
        return delivery
    }

    @Test("APNs alert, the default: generic text, mutable-content, badge, priority 10, expiration and collapse id")
    func apnsAlert() async throws {
        try await APNsFixture.with { fixture in
            let push = Self.push(token: TestSupport.randomHexToken(), platform: .apns)
            try await Self.expectGolden("apns-alert", push, fixture: fixture) { Self.apnsValues(push, $0) }
        }
    }

    @Test("APNs alert with configured text and localization keys, without a badge")
    func apnsAlertLocalized() async throws {
        let alert = GenericAlert(title: "New secure message", body: "Tap to read it.", titleLocKey: "SECURE_TITLE", bodyLocKey: "SECURE_BODY")
        try await APNsFixture.with(alert: alert) { fixture in
            let push = Self.push(token: TestSupport.randomHexToken(), platform: .apns, badge: nil)
            try await Self.expectGolden("apns-alert-localized", push, fixture: fixture) { Self.apnsValues(push, $0) }
        }
    }

    @Test("APNs silent (configured, or the device's push_style option): content-available, background, priority 5, no badge")
    func apnsSilent() async throws {
        try await APNsFixture.with { fixture in
            let push = Self.push(token: TestSupport.randomHexToken(), platform: .apns, options: ["push_style": "silent"])
            try await Self.expectGolden("apns-silent", push, fixture: fixture) { Self.apnsValues(push, $0) }
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

    @Test("FCM: data-only, high priority, id and generic text in data, the APNs alert in the apns block")
    func fcm() async throws {
        try await FCMFixture.with { fixture in
            let push = Self.push(token: "fcm-token-" + UUID().uuidString.lowercased(), platform: .fcm)
            try await Self.expectGolden("fcm", push, fixture: fixture) { try Self.fcmValues(push, $0) }
        }
    }

    @Test("FCM with the silent APNs style: the apns block is a background push")
    func fcmSilent() async throws {
        try await FCMFixture.with(envelopes: EnvelopeSettings(apnsStyle: .silent)) { fixture in
            let push = Self.push(token: "fcm-token-" + UUID().uuidString.lowercased(), platform: .fcm)
            try await Self.expectGolden("fcm-apns-silent", push, fixture: fixture) { try Self.fcmValues(push, $0) }
        }
    }

    @Test("Web Push: a Declarative Web Push message (decrypted by the fake), TTL, Urgency, Topic, VAPID")
    func webPush() async throws {
        try await WebPushFixture.with { fixture in
            let subscription = fixture.fake.subscribe()
            var push = fixture.push(subscription)
            push.badge = Self.badge
            let topic = push.notificationID.description.replacingOccurrences(of: "-", with: "")
            let delivery = try await Self.expectGolden("webpush", push, fixture: fixture, extra: ["topic": topic])
            #expect(delivery.request.body.count <= GoldenEnvelope.maxBodyBytes, "the encrypted body fits 4 KiB too")
        }
    }

    /// A collapse digest as `securepush.collapse_digest` writes it (32 hex digits), for the `{collapse}` placeholder.
    static let collapse = "8f14e45fceea167a5a36dedd4bea2543"

    /// `push` with an urgency and the collapse digest.
    static func controlled(_ push: Push, _ urgency: Urgency) -> Push {
        var push = push
        push.urgency = urgency
        push.collapseID = Self.collapse
        return push
    }

    @Test("APNs time-sensitive with a collapse key: interruption-level, priority 10, the digest as apns-collapse-id and secureCollapse")
    func apnsTimeSensitiveCollapsed() async throws {
        try await APNsFixture.with { fixture in
            let push = Self.controlled(Self.push(token: TestSupport.randomHexToken(), platform: .apns), .timeSensitive)
            try await Self.expectGolden("apns-time-sensitive-collapsed", push, fixture: fixture, extra: ["collapse": Self.collapse]) {
                Self.apnsValues(push, $0)
            }
        }
    }

    @Test("APNs passive: interruption-level passive, priority 5; critical: a critical sound")
    func apnsPassiveAndCritical() async throws {
        try await APNsFixture.with { fixture in
            var push = Self.push(token: TestSupport.randomHexToken(), platform: .apns)
            push.urgency = .passive
            try await Self.expectGolden("apns-passive", push, fixture: fixture) { Self.apnsValues(push, $0) }
        }
        try await APNsFixture.with { fixture in
            var push = Self.push(token: TestSupport.randomHexToken(), platform: .apns)
            push.urgency = .critical
            try await Self.expectGolden("apns-critical", push, fixture: fixture) { Self.apnsValues(push, $0) }
        }
    }

    @Test("FCM passive with a collapse key: normal priority, the digest as collapse_key and secureCollapse, urgency in data")
    func fcmPassiveCollapsed() async throws {
        try await FCMFixture.with { fixture in
            let push = Self.controlled(Self.push(token: "fcm-token-" + UUID().uuidString.lowercased(), platform: .fcm), .passive)
            try await Self.expectGolden("fcm-passive-collapsed", push, fixture: fixture, extra: ["collapse": Self.collapse]) {
                try Self.fcmValues(push, $0)
            }
        }
    }

    @Test("FCM to a Firebase Installation ID: message.fid instead of message.token")
    func fcmInstallationID() async throws {
        try await FCMFixture.with { fixture in
            let fid = "c" + String(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(21))
            #expect(FCMRecipient(token: fid) == .installationID)
            let push = Self.push(token: fid, platform: .fcm)
            try await Self.expectGolden("fcm-fid", push, fixture: fixture) { try Self.fcmValues(push, $0) }
        }
    }

    @Test("Web Push time-sensitive with a collapse key: Urgency high, the digest as Topic, tag and data.collapse")
    func webPushTimeSensitiveCollapsed() async throws {
        try await WebPushFixture.with { fixture in
            var push = Self.controlled(fixture.push(fixture.fake.subscribe()), .timeSensitive)
            push.badge = Self.badge
            try await Self.expectGolden("webpush-time-sensitive-collapsed", push, fixture: fixture, extra: ["collapse": Self.collapse])
        }
    }

    @Test("Web Push passive: Urgency low and a silent notification")
    func webPushPassive() async throws {
        try await WebPushFixture.with { fixture in
            var push = fixture.push(fixture.fake.subscribe())
            push.urgency = .passive
            let topic = push.notificationID.description.replacingOccurrences(of: "-", with: "")
            try await Self.expectGolden("webpush-passive", push, fixture: fixture, extra: ["topic": topic])
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
            try await Self.expectGolden("apns-clear", push, fixture: fixture, extra: ["older": older.description]) { Self.apnsValues(push, $0) }
        }
    }

    @Test("clears (read sync): FCM normal priority, secureClear comma-separated, the apns block a background push")
    func fcmClear() async throws {
        try await FCMFixture.with { fixture in
            let (push, older) = Self.clear(Self.push(token: "fcm-token-" + UUID().uuidString.lowercased(), platform: .fcm))
            try await Self.expectGolden("fcm-clear", push, fixture: fixture, extra: ["older": older.description]) { try Self.fcmValues(push, $0) }
        }
    }

    @Test("clears (read sync): Web Push plain {secureClear}, Urgency low, no topic")
    func webPushClear() async throws {
        try await WebPushFixture.with { fixture in
            let (push, older) = Self.clear(fixture.push(fixture.fake.subscribe()))
            try await Self.expectGolden("webpush-clear", push, fixture: fixture, extra: ["older": older.description])
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

/// A provider fixture whose fake records the requests it accepted.
protocol RecordingFixture {
    associatedtype Provider: PushProvider
    /// The provider pointed at the fake.
    var provider: Provider { get }
    /// The requests the fake accepted, in order.
    var delivered: [FakeRequest] { get }
}

extension APNsFixture: RecordingFixture {
    var delivered: [FakeRequest] { fake.delivered }
}

extension FCMFixture: RecordingFixture {
    var delivered: [FakeRequest] { fake.delivered }
}
