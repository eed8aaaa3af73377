import Foundation
import SecurePushCore
import SecurePushFakes
import SecurePushProviders
import Testing

struct WNSFixture {
    let fake: FakeWNSServer
    let provider: WNSProvider

    static func with<T>(
        secret: String = "s3cret", requestTimeout: Duration = .seconds(10), allowedHosts: [String] = ["127.0.0.1", "localhost"],
        allowedPrivateNetworks: [IPNetwork] = TestSupport.loopback, resolver: any HostResolver = SystemHostResolver(),
        _ body: (WNSFixture) async throws -> T
    ) async throws -> T {
        let fake = try await FakeWNSServer.start(clientID: "ms-app://s-1-15-2-1", clientSecret: "s3cret")
        return try await withShutdown(of: fake) {
            try await TestSupport.withClients { client, pinned in
                let provider = try WNSProvider(
                    configuration: WNSConfiguration(
                        clientID: "ms-app://s-1-15-2-1", clientSecret: secret, tokenURL: fake.tokenURL,
                        allowedHostSuffixes: allowedHosts, allowedPrivateNetworks: allowedPrivateNetworks, caFile: fake.caFile,
                        requestTimeout: requestTimeout),
                    httpClient: client, pinnedClients: pinned, resolver: resolver, logger: TestSupport.logger)
                return try await body(WNSFixture(fake: fake, provider: provider))
            }
        }
    }
}

@Suite("WNS provider against the fake WNS")
struct WNSProviderTests {
    @Test("a raw notification whose body is the id, with a cached token")
    func rawNotification() async throws {
        try await WNSFixture.with { fixture in
            let channel = fixture.fake.makeChannelURI()
            let push = TestSupport.push(token: channel, platform: .wns, ttl: 300)
            let result = await fixture.provider.send(push)
            #expect(result.kind == "sent")
            #expect(!(result.reason.isEmpty))
            let request = try #require(fixture.fake.delivered.first)
            #expect(String(decoding: request.body, as: UTF8.self) == push.notificationID.description)
            #expect(request.header("x-wns-type") == "wns/raw")
            #expect(request.header("content-type") == "application/octet-stream")
            let ttl = try #require(request.header("x-wns-ttl").flatMap(Int.init))
            #expect((290...300).contains(ttl))
            for _ in 0..<5 {
                #expect(await fixture.provider.send(TestSupport.push(token: channel, platform: .wns)).kind == "sent")
            }
            #expect(fixture.fake.issuedAccessTokens == 1)
        }
    }

    @Test("401 renews the token and retries")
    func renewOn401() async throws {
        try await WNSFixture.with { fixture in
            let channel = fixture.fake.makeChannelURI()
            #expect(await fixture.provider.send(TestSupport.push(token: channel, platform: .wns)).kind == "sent")
            fixture.fake.revokeAccessTokens()
            #expect(await fixture.provider.send(TestSupport.push(token: channel, platform: .wns)).kind == "sent")
            #expect(fixture.fake.issuedAccessTokens == 2)
        }
    }

    @Test("a wrong client secret is a permanent failure naming no secret")
    func badCredentials() async throws {
        try await WNSFixture.with(secret: "wrong-secret") { fixture in
            let result = await fixture.provider.send(TestSupport.push(token: fixture.fake.makeChannelURI(), platform: .wns))
            #expect(result.kind == "failed")
            #expect(!result.reason.contains("wrong-secret"))
        }
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var status: Int
        var retryAfter: String? = nil
        var expected: String
        var after: Duration? = nil
        /// For retries: whether it counts against the host's circuit breaker.
        var scope: FailureScope? = nil
        var testDescription: String { "\(status) → \(expected)" }
    }

    static let rows: [Row] = [
        Row(status: 403, expected: "failed"),
        Row(status: 404, expected: "tokenInvalid"),
        Row(status: 410, expected: "tokenInvalid"),
        Row(status: 406, expected: "retry", after: .seconds(60), scope: .provider),
        Row(status: 406, retryAfter: "90", expected: "retry", after: .seconds(90), scope: .provider),
        Row(status: 413, expected: "failed"),
        Row(status: 400, expected: "failed"),
        Row(status: 500, expected: "retry", scope: .provider),
        Row(status: 503, retryAfter: "10", expected: "retry", after: .seconds(10), scope: .provider),
    ]

    @Test("WNS answers map to the right result", arguments: rows)
    func responses(_ row: Row) async throws {
        try await WNSFixture.with { fixture in
            let channel = fixture.fake.makeChannelURI()
            fixture.fake.script(channel: channel, .reject(status: row.status, retryAfter: row.retryAfter))
            let result = await fixture.provider.send(TestSupport.push(token: channel, platform: .wns))
            #expect(result.kind == row.expected)
            #expect(result.retryAfter == row.after)
            #expect(result.scope == row.scope)
        }
    }

    @Test("a stalled channel is a retry after the deadline")
    func stalled() async throws {
        // The warm-up (token fetch, TLS handshake, first send) must fit the same deadline on a loaded 2-core machine.
        try await WNSFixture.with(requestTimeout: .seconds(6)) { fixture in
            #expect(await fixture.provider.send(TestSupport.push(token: fixture.fake.makeChannelURI(), platform: .wns)).kind == "sent")
            let channel = fixture.fake.makeChannelURI()
            fixture.fake.script(channel: channel, .stall)
            #expect(
                await fixture.provider.send(TestSupport.push(token: channel, platform: .wns))
                    == .retry(after: nil, reason: "WNS request timed out", scope: .provider))
        }
    }

    @Test("a 401 that persists after renewal is a retry, not a loop")
    func persistent401() async throws {
        try await WNSFixture.with { fixture in
            let channel = fixture.fake.makeChannelURI()
            fixture.fake.script(channel: channel, .reject(status: 401))
            #expect(await fixture.provider.send(TestSupport.push(token: channel, platform: .wns)).kind == "retry")
            #expect(fixture.fake.requests.filter { $0.path.hasPrefix("/w/") }.count == 2)
        }
    }

    @Test("channel URIs outside the allowed hosts are refused without a request")
    func hostAllowList() async throws {
        try await WNSFixture.with { fixture in
            let result = await fixture.provider.send(TestSupport.push(token: "https://evil.example.com/w/?token=x", platform: .wns))
            #expect(result.kind == "tokenInvalid")
            let plain = fixture.fake.makeChannelURI().replacingOccurrences(of: "https://", with: "http://")
            #expect(await fixture.provider.send(TestSupport.push(token: plain, platform: .wns)).kind == "tokenInvalid")
            #expect(fixture.fake.requests.isEmpty)
        }
        // The production default allows only Microsoft's notification hosts.
        try await TestSupport.withClients { client, pinned in
            let production = try WNSProvider(
                configuration: WNSConfiguration(clientID: "c", clientSecret: "s"), httpClient: client, pinnedClients: pinned,
                logger: TestSupport.logger)
            #expect(production.isAllowedChannel("https://db5p.notify.windows.com/w/?token=abc"))
            #expect(!production.isAllowedChannel("https://notify.windows.com.evil.com/w/?token=abc"))
            #expect(!production.isAllowedChannel("https://evilnotify.windows.com/w/"))
            #expect(!production.isAllowedChannel("http://db5p.notify.windows.com/w/"))
        }
    }
}
