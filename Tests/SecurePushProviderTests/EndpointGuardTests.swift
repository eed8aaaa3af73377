import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import SecurePushCore
import SecurePushFakes
import Testing

@testable import SecurePushProviders

/// A resolver answering fixed addresses (or failing), recording what it was asked.
final class FixedResolver: HostResolver {
    let answer: [IPAddress]?
    let asked = NIOLockedValueBox<[String]>([])

    init(_ addresses: [String]?) {
        self.answer = addresses.map { $0.map { IPAddress($0)! } }
    }

    func addresses(of host: String) async throws -> [IPAddress] {
        asked.withLockedValue { $0.append(host) }
        guard let answer else { throw HostResolutionError(code: -2) }
        return answer
    }
}

@Suite("Send-time SSRF guard: resolved addresses are checked and pinned")
struct EndpointGuardTests {
    /// What the attacker's DNS answers for an allowed host.
    static let privateAnswers: [([String], String)] = [
        (["127.0.0.1"], "127.0.0.1, which is not a public address (loopback, 127.0.0.0/8)"),
        (["10.0.0.1"], "10.0.0.1, which is not a public address (private, 10.0.0.0/8)"),
        (["169.254.169.254"], "169.254.169.254, which is not a public address (link-local, 169.254.0.0/16)"),
        (["::1"], "::1, which is not a public address (loopback, ::1/128)"),
        (["::ffff:10.0.0.1"], "::ffff:10.0.0.1, which is not a public address (IPv4-mapped, ::ffff:0:0/96)"),
        (["8.8.8.8", "10.0.0.1"], "10.0.0.1, which is not a public address (private, 10.0.0.0/8)"),
    ]

    /// `endpoint` with its host replaced by `host` (the fake's port and path kept).
    static func renamed(_ endpoint: String, to host: String) -> String {
        endpoint.replacingOccurrences(of: "https://127.0.0.1:", with: "https://\(host):")
    }

    @Test("Web Push: an allowed host resolving to a non-public address is refused; nothing leaves the process", arguments: 0..<privateAnswers.count)
    func webPushPrivateAnswers(_ index: Int) async throws {
        let (addresses, why) = Self.privateAnswers[index]
        let resolver = FixedResolver(addresses)
        try await WebPushFixture.with(allowedHosts: ["push.example.test"], allowedPrivateNetworks: [], resolver: resolver) { fixture in
            let subscription = fixture.fake.subscribe()
            let push = TestSupport.push(
                token: Self.renamed(subscription.endpoint, to: "push.example.test"), platform: .webpush,
                options: ["p256dh": subscription.p256dh, "auth": subscription.auth])
            let result = await fixture.provider.send(push)
            #expect(result == .tokenInvalid(reason: "Web Push endpoint refused: its host push.example.test resolves to \(why)"))
            #expect(fixture.fake.requests.isEmpty)
            #expect(resolver.asked.withLockedValue { $0 } == ["push.example.test"])
        }
    }

    @Test("Web Push: a host resolving to the fake's loopback address goes through when 127.0.0.0/8 is allowed")
    func webPushAllowedPrivateNetwork() async throws {
        let resolver = FixedResolver(["127.0.0.1"])
        try await WebPushFixture.with(allowedHosts: ["localhost"], resolver: resolver) { fixture in
            let subscription = fixture.fake.subscribe()
            let push = TestSupport.push(
                token: Self.renamed(subscription.endpoint, to: "localhost"), platform: .webpush,
                options: ["p256dh": subscription.p256dh, "auth": subscription.auth])
            #expect(await fixture.provider.send(push).kind == "sent", "rejections: \(fixture.fake.rejections)")
            #expect(await fixture.provider.send(push).kind == "sent")
            #expect(fixture.fake.deliveries.count == 2)
            #expect(fixture.provider.endpoints.clients.count == 1, "one pinned client for (localhost, 127.0.0.1)")
        }
    }

    @Test("the request goes to the checked address, not to what the system resolver says now")
    func pinnedToCheckedAddress() async throws {
        // The fake listens on 127.0.0.1 only, which is what the system resolves localhost to. The checked
        // answer is 127.0.0.2: the connection must go there (and be refused), never to the fake.
        let resolver = FixedResolver(["127.0.0.2"])
        try await WebPushFixture.with(allowedHosts: ["localhost"], resolver: resolver) { fixture in
            let subscription = fixture.fake.subscribe()
            let push = TestSupport.push(
                token: Self.renamed(subscription.endpoint, to: "localhost"), platform: .webpush,
                options: ["p256dh": subscription.p256dh, "auth": subscription.auth])
            #expect(await fixture.provider.send(push).kind == "retry")
            #expect(fixture.fake.requests.isEmpty)
        }
    }

    @Test("a host that cannot be resolved is retried later, without a request, as the device's failure (no breaker counts it)")
    func unresolved() async throws {
        try await WebPushFixture.with(allowedHosts: ["localhost"], resolver: FixedResolver(nil)) { fixture in
            let subscription = fixture.fake.subscribe()
            let push = TestSupport.push(
                token: Self.renamed(subscription.endpoint, to: "localhost"), platform: .webpush,
                options: ["p256dh": subscription.p256dh, "auth": subscription.auth])
            #expect(await fixture.provider.send(push) == .retry(after: nil, reason: "Web Push endpoint host could not be resolved", scope: .device))
            #expect(fixture.fake.requests.isEmpty)
        }
    }

    @Test("IP-literal endpoints: refused without a lookup unless their network is allowed")
    func literalEndpoints() async throws {
        let resolver = FixedResolver(["8.8.8.8"])
        try await WebPushFixture.with(allowedPrivateNetworks: [], resolver: resolver) { fixture in
            let subscription = fixture.fake.subscribe()
            let push = fixture.push(subscription)
            #expect(
                await fixture.provider.send(push)
                    == .tokenInvalid(reason: "Web Push endpoint refused: its host 127.0.0.1 is not a public address (loopback, 127.0.0.0/8)"))
            let elsewhere = TestSupport.push(
                token: "https://evil.example.com/push/x", platform: .webpush, options: ["p256dh": subscription.p256dh, "auth": subscription.auth])
            #expect(
                await fixture.provider.send(elsewhere)
                    == .tokenInvalid(reason: "Web Push endpoint refused: its host evil.example.com is not in SECUREPUSH_WEBPUSH_ALLOWED_HOSTS"))
            #expect(fixture.fake.requests.isEmpty)
            #expect(resolver.asked.withLockedValue { $0 }.isEmpty)
        }
    }

    @Test("WNS: an allowed host resolving to a non-public address is refused; no token or channel request", arguments: 0..<privateAnswers.count)
    func wnsPrivateAnswers(_ index: Int) async throws {
        let (addresses, why) = Self.privateAnswers[index]
        let resolver = FixedResolver(addresses)
        try await WNSFixture.with(allowedHosts: ["notify.windows.com"], allowedPrivateNetworks: [], resolver: resolver) { fixture in
            // On 443, as a public push service's endpoints must be (nothing is sent: the address is refused first).
            let channel = fixture.fake.makeChannelURI().replacingOccurrences(
                of: #"https://127\.0\.0\.1:[0-9]+"#, with: "https://db5p.notify.windows.com", options: .regularExpression)
            let result = await fixture.provider.send(TestSupport.push(token: channel, platform: .wns))
            #expect(result == .tokenInvalid(reason: "WNS channel URI refused: its host db5p.notify.windows.com resolves to \(why)"))
            #expect(fixture.fake.requests.isEmpty, "not even an access token request")
        }
    }

    @Test("WNS: a host resolving to the fake's loopback address goes through when 127.0.0.0/8 is allowed")
    func wnsAllowedPrivateNetwork() async throws {
        let resolver = FixedResolver(["127.0.0.1"])
        try await WNSFixture.with(allowedHosts: ["localhost"], resolver: resolver) { fixture in
            let channel = Self.renamed(fixture.fake.makeChannelURI(), to: "localhost")
            #expect(await fixture.provider.send(TestSupport.push(token: channel, platform: .wns)).kind == "sent")
            #expect(fixture.fake.delivered.count == 1)
            #expect(resolver.asked.withLockedValue { $0 } == ["localhost"])
        }
    }

    @Test("the pinned-client cache keeps at most its capacity of idle clients and shuts every client down")
    func cacheCapacity() async throws {
        let pinned = PinnedHTTPClients(configuration: TestSupport.clientConfiguration, capacity: 2)
        for last in 1...5 {
            try await pinned.withClient(host: "push.example.test", address: IPAddress("203.0.113.\(last)")!) { _ in }
        }
        #expect(pinned.count == 2)
        // Clients in use are never evicted under their request.
        try await pinned.withClient(host: "a.example.test", address: IPAddress("203.0.113.10")!) { _ in
            try await pinned.withClient(host: "b.example.test", address: IPAddress("203.0.113.11")!) { _ in
                try await pinned.withClient(host: "c.example.test", address: IPAddress("203.0.113.12")!) { _ in
                    #expect(pinned.count == 3)
                }
            }
        }
        #expect(pinned.count == 2)
        await pinned.shutdown()
        #expect(pinned.count == 0)
        await #expect(throws: HTTPClientError.alreadyShutdown) {
            try await pinned.withClient(host: "push.example.test", address: IPAddress("203.0.113.1")!) { _ in }
        }
    }

    @Test("the system resolver answers localhost with loopback addresses")
    func systemResolver() async throws {
        let addresses = try await SystemHostResolver().addresses(of: "localhost")
        #expect(!addresses.isEmpty)
        #expect(addresses.allSatisfy { $0.nonPublicRange?.name == "loopback" })
    }
}
