import Crypto
import Foundation
import SecurePushCore
import SecurePushFakes
import SecurePushProviders
import Testing

struct WebPushFixture {
    let fake: FakeWebPushServer
    let provider: WebPushProvider
    let vapidKey: P256.Signing.PrivateKey

    static func with<T>(
        requestTimeout: Duration = .seconds(10), allowedHosts: [String] = ["127.0.0.1", "localhost"],
        allowedPrivateNetworks: [IPNetwork] = TestSupport.loopback,
        resolver: any HostResolver = SystemHostResolver(), envelopes: EnvelopeSettings = EnvelopeSettings(), resetLimit: Int = 200,
        _ body: (WebPushFixture) async throws -> T
    ) async throws -> T {
        let fake = try await FakeWebPushServer.start(resetLimit: resetLimit)
        return try await withShutdown(of: fake) {
            try await TestSupport.withClients { client, pinned in
                let key = P256.Signing.PrivateKey()
                let provider = try WebPushProvider(
                    configuration: WebPushConfiguration(
                        vapidKey: key, subject: "mailto:push@example.com", navigateURL: FakeCredentials.navigateURL, caFile: fake.caFile,
                        requestTimeout: requestTimeout,
                        allowedHosts: allowedHosts, allowedPrivateNetworks: allowedPrivateNetworks, envelopes: envelopes),
                    httpClient: client, pinnedClients: pinned, resolver: resolver, logger: TestSupport.logger)
                return try await body(WebPushFixture(fake: fake, provider: provider, vapidKey: key))
            }
        }
    }

    func push(_ subscription: FakeWebPushServer.Subscription, ttl: TimeInterval = 3600) -> Push {
        TestSupport.push(
            token: subscription.endpoint, platform: .webpush, options: ["p256dh": subscription.p256dh, "auth": subscription.auth], ttl: ttl)
    }
}

@Suite("Web Push provider against the fake push service")
struct WebPushProviderTests {
    @Test("the body decrypts (RFC 8291) to a declarative message carrying only the id, with VAPID, TTL, Urgency and Topic")
    func encryptedIdOnly() async throws {
        try await WebPushFixture.with { fixture in
            let subscription = fixture.fake.subscribe()
            let push = fixture.push(subscription, ttl: 900)
            let result = await fixture.provider.send(push)
            #expect(result.kind == "sent", "rejections: \(fixture.fake.rejections)")
            let delivery = try #require(fixture.fake.deliveries.first)
            let message = try #require(try JSONSerialization.jsonObject(with: delivery.plaintext) as? [String: Any])
            #expect(message["web_push"] as? Int == 8030)
            #expect(message["mutable"] as? Bool == true)
            let notification = try #require(message["notification"] as? [String: Any])
            #expect(notification["title"] as? String == GenericAlert.defaultTitle)
            #expect(notification["navigate"] as? String == "https://app.example.com/notifications/\(push.notificationID)")
            #expect(notification["data"] as? [String: String] == ["secureId": push.notificationID.description, "urgency": "active"])
            #expect(delivery.request.header("content-encoding") == "aes128gcm")
            let ttl = try #require(delivery.request.header("ttl").flatMap(Int.init))
            #expect((890...900).contains(ttl))
            #expect(delivery.request.header("urgency") == "normal")
            #expect(delivery.request.header("topic")?.count == 32)
            let jwt = try #require(CompactJWTReader(delivery.vapidJWT))
            #expect(jwt.string("aud") == fixture.fake.origin)
            #expect(jwt.string("sub") == "mailto:push@example.com")
            #expect(delivery.vapidKey == fixture.vapidKey.publicKey.x963Representation.fakeBase64URL)
            // The plaintext id does not appear in the encrypted body.
            #expect(delivery.request.body.range(of: Data(push.notificationID.description.utf8)) == nil)
        }
    }

    @Test("a body encrypted for another subscription is refused by the fake (so decryption really is checked)")
    func wrongKeysRefused() async throws {
        try await WebPushFixture.with { fixture in
            let subscription = fixture.fake.subscribe()
            let other = WebPushDecryptor()
            let push = TestSupport.push(
                token: subscription.endpoint, platform: .webpush, options: ["p256dh": other.p256dh, "auth": subscription.auth])
            #expect(await fixture.provider.send(push) == .failed(reason: "Web Push 400"))
            #expect(fixture.fake.rejections.first?.hasPrefix("decryption failed") == true)
        }
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var behavior: FakeWebPushServer.Behavior
        var expected: String
        var after: Duration? = nil
        /// For retries: whether it counts against the host's circuit breaker.
        var scope: FailureScope? = nil
        var testDescription: String { "\(behavior) → \(expected)" }
    }

    static let rows: [Row] = [
        Row(behavior: .reject(status: 404), expected: "tokenInvalid"),
        Row(behavior: .reject(status: 410), expected: "tokenInvalid"),
        Row(behavior: .reject(status: 413), expected: "failed"),
        Row(behavior: .reject(status: 429, retryAfter: "42"), expected: "retry", after: .seconds(42), scope: .provider),
        Row(behavior: .reject(status: 429), expected: "retry", scope: .provider),
        Row(behavior: .reject(status: 500), expected: "retry", scope: .provider),
        Row(behavior: .reject(status: 503, retryAfter: "5"), expected: "retry", after: .seconds(5), scope: .provider),
        Row(behavior: .reject(status: 400), expected: "failed"),
        Row(behavior: .reject(status: 403), expected: "failed"),
    ]

    @Test("push service answers map to the right result", arguments: rows)
    func responses(_ row: Row) async throws {
        try await WebPushFixture.with { fixture in
            let subscription = fixture.fake.subscribe()
            fixture.fake.script(subscription, row.behavior)
            let result = await fixture.provider.send(fixture.push(subscription))
            #expect(result.kind == row.expected)
            #expect(result.retryAfter == row.after)
            #expect(result.scope == row.scope)
            #expect(!result.reason.contains(subscription.endpoint))
        }
    }

    @Test("a redirect is never followed")
    func redirectNotFollowed() async throws {
        try await WebPushFixture.with { fixture in
            let subscription = fixture.fake.subscribe()
            let target = fixture.fake.subscribe()
            fixture.fake.script(subscription, .redirect(to: target.endpoint))
            let result = await fixture.provider.send(fixture.push(subscription))
            #expect(result.kind == "failed")
            #expect(fixture.fake.requests.count == 1)
            #expect(fixture.fake.deliveries.isEmpty)
        }
    }

    @Test("non-https endpoints and malformed keys never leave the process")
    func refusedLocally() async throws {
        try await WebPushFixture.with { fixture in
            let subscription = fixture.fake.subscribe()
            let http = subscription.endpoint.replacingOccurrences(of: "https://", with: "http://")
            #expect(
                await fixture.provider.send(
                    TestSupport.push(token: http, platform: .webpush, options: ["p256dh": subscription.p256dh, "auth": subscription.auth])
                ).kind == "tokenInvalid")
            #expect(
                await fixture.provider.send(TestSupport.push(token: subscription.endpoint, platform: .webpush, options: ["auth": subscription.auth]))
                    .kind == "tokenInvalid")
            #expect(
                await fixture.provider.send(
                    TestSupport.push(token: subscription.endpoint, platform: .webpush, options: ["p256dh": "AAAA", "auth": subscription.auth])
                ).kind == "tokenInvalid")
            #expect(fixture.fake.requests.isEmpty)
        }
    }

    @Test("a stalled push service is a retry after the deadline")
    func stalled() async throws {
        try await WebPushFixture.with(requestTimeout: .seconds(2)) { fixture in
            #expect(await fixture.provider.send(fixture.push(fixture.fake.subscribe())).kind == "sent")
            let subscription = fixture.fake.subscribe()
            fixture.fake.script(subscription, .stall)
            #expect(
                await fixture.provider.send(fixture.push(subscription)) == .retry(after: nil, reason: "Web Push request timed out", scope: .provider))
        }
    }
}
