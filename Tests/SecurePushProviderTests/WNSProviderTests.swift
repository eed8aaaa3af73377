import Foundation
import Logging
import SecurePushCore
import SecurePushFakes
import SecurePushServer
import SecurePushTestSupport
import Testing

@testable import SecurePushProviders

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

/// Everything WNS-specific in one file, the layout a new platform copies (docs/architecture.md § Add a push
/// platform): the provider against the fake, the answer classifier, the golden envelopes (docs/envelopes/wns*.http),
/// the sealed envelope, the settings and log hygiene. What must hold for every platform is tested once, over
/// `FakePushServices`.
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

    // MARK: Classifier

    struct VerdictRow: Sendable, CustomTestStringConvertible {
        var status: Int
        var retryAfter: Duration? = nil
        var expected: ProviderVerdict
        var testDescription: String { "\(status)\(retryAfter.map { " Retry-After \($0)" } ?? "") → \(expected)" }
    }

    static let throttleBackoff: Duration = .seconds(60)

    static let verdictRows: [VerdictRow] = [
        VerdictRow(status: 200, expected: .result(.sent(messageID: "msg-1"))),
        VerdictRow(status: 201, expected: .result(.sent(messageID: "msg-1"))),
        VerdictRow(status: 401, expected: .renewTokenAndRetry),
        VerdictRow(status: 404, expected: .result(.tokenInvalid(reason: "WNS 404"))),
        VerdictRow(status: 410, expected: .result(.tokenInvalid(reason: "WNS 410"))),
        VerdictRow(status: 406, expected: .result(.retry(after: .seconds(60), reason: "WNS 406 throttled", scope: .provider))),
        VerdictRow(
            status: 406, retryAfter: .seconds(90), expected: .result(.retry(after: .seconds(90), reason: "WNS 406 throttled", scope: .provider))),
        VerdictRow(status: 429, expected: .result(.retry(after: nil, reason: "WNS 429", scope: .provider))),
        VerdictRow(status: 429, retryAfter: .seconds(5), expected: .result(.retry(after: .seconds(5), reason: "WNS 429", scope: .provider))),
        VerdictRow(status: 500, expected: .result(.retry(after: nil, reason: "WNS 500", scope: .provider))),
        VerdictRow(status: 503, retryAfter: .seconds(10), expected: .result(.retry(after: .seconds(10), reason: "WNS 503", scope: .provider))),
        VerdictRow(status: 599, expected: .result(.retry(after: nil, reason: "WNS 599", scope: .provider))),
        VerdictRow(status: 400, expected: .result(.failed(reason: "WNS 400"))),
        VerdictRow(status: 403, expected: .result(.failed(reason: "WNS 403"))),
        VerdictRow(status: 413, expected: .result(.failed(reason: "WNS 413"))),
        // Retry-After does not turn a permanent answer into a retry.
        VerdictRow(status: 400, retryAfter: .seconds(30), expected: .result(.failed(reason: "WNS 400"))),
    ]

    @Test("the classifier: every WNS answer maps to one verdict", arguments: verdictRows)
    func classifierRow(_ row: VerdictRow) {
        let verdict = WNSResponseClassifier.classify(
            status: row.status, retryAfter: row.retryAfter, throttleBackoff: Self.throttleBackoff, msgID: "msg-1")
        #expect(verdict == row.expected)
    }

    // MARK: Envelopes

    /// The placeholders of a WNS golden file: the common ones with the TTL, the channel and the access token.
    static func goldenValues(_ push: Push, _ request: FakeRequest, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: String] {
        var values = EnvelopeGoldenTests.values(
            push, ttl: try EnvelopeGoldenTests.checkedTTL(request.header("x-wns-ttl"), sourceLocation: sourceLocation))
        values["channel"] = request.path
        values["access-token"] = String(request.header("authorization")?.dropFirst("Bearer ".count) ?? "")
        return values
    }

    @Test("WNS: raw, body = id, TTL, cache policy")
    func wns() async throws {
        try await WNSFixture.with { fixture in
            let push = EnvelopeGoldenTests.push(token: fixture.fake.makeChannelURI(), platform: .wns)
            try await EnvelopeGoldenTests.expectGolden("wns", push, fixture: fixture) { try Self.goldenValues(push, $0) }
        }
    }

    @Test("WNS time-sensitive: X-WNS-Priority 1")
    func wnsTimeSensitive() async throws {
        try await WNSFixture.with { fixture in
            var push = EnvelopeGoldenTests.push(token: fixture.fake.makeChannelURI(), platform: .wns)
            push.urgency = .timeSensitive
            try await EnvelopeGoldenTests.expectGolden("wns-time-sensitive", push, fixture: fixture) { try Self.goldenValues(push, $0) }
        }
    }

    @Test("clears (read sync): WNS raw, body clear: and the ids")
    func wnsClear() async throws {
        try await WNSFixture.with { fixture in
            let (push, older) = EnvelopeGoldenTests.clear(EnvelopeGoldenTests.push(token: fixture.fake.makeChannelURI(), platform: .wns))
            try await EnvelopeGoldenTests.expectGolden("wns-clear", push, fixture: fixture, extra: ["older": older.description]) {
                try Self.goldenValues(push, $0)
            }
        }
    }

    @Test("WNS sealed: the raw body is sealed:<id>:<sealed>")
    func sealedGolden() async throws {
        var sizes: [Int] = []
        for (name, preview) in [("wns-sealed", SealedEnvelopeGoldenTests.preview), (nil, nil)] {
            try await WNSFixture.with { fixture in
                let push = SealedEnvelopeGoldenTests.sealed(
                    EnvelopeGoldenTests.push(token: fixture.fake.makeChannelURI(), platform: .wns), preview: preview,
                    key: SealedEnvelopeGoldenTests.sealingKey())
                #expect(await fixture.provider.send(push).kind == "sent")
                let request = try #require(fixture.delivered.first)
                sizes.append(request.body.count)
                let body = String(decoding: request.body, as: UTF8.self)
                var values = try Self.goldenValues(push, request)
                values.merge(try SealedEnvelopeGoldenTests.sealedValue(body.split(separator: ":").last.map(String.init))) { $1 }
                if let name { try GoldenEnvelope(name: name).expect(request, values: values) }
            }
        }
        #expect(sizes.count == 2 && sizes[0] == sizes[1], "sealed WNS bodies with and without a preview: \(sizes)")
    }

    // MARK: Settings and logs

    @Test("settings: the client id and secret are required; defaults for the hosts, the token URL and the app")
    func settings() throws {
        #expect(ProviderSettingsTests.message(["SECUREPUSH_PROVIDERS": "wns"])?.hasPrefix("SECUREPUSH_WNS_CLIENT_ID is not set") == true)
        #expect(
            ProviderSettingsTests.message(["SECUREPUSH_PROVIDERS": "wns", "SECUREPUSH_WNS_CLIENT_ID": "c"])?.hasPrefix(
                "SECUREPUSH_WNS_CLIENT_SECRET is not set")
                == true)
        let wns = try #require(
            try ProviderSettingsTests.configuration([
                "SECUREPUSH_PROVIDERS": "wns", "SECUREPUSH_WNS_CLIENT_ID": "c", "SECUREPUSH_WNS_CLIENT_SECRET": "s",
            ])
            .providerSettings.wns)
        #expect(wns.allowedHostSuffixes == ["notify.windows.com"])
        #expect(wns.apps.map(\.tokenURL) == [WNSConfiguration.defaultTokenURL])
        #expect(wns.apps.map(\.name) == [nil])
    }

    @Test("logs no client secret, access token or channel")
    func logHygiene() async throws {
        let logs = CapturedLogs()
        let wns = try await FakeWNSServer.start(clientID: "client", clientSecret: "very-secret-value")
        let channel = wns.makeChannelURI()
        wns.script(channel: channel, .reject(status: 403))
        try await TestSupport.withClients { client, pinned in
            let good = try WNSProvider(
                configuration: WNSConfiguration(
                    clientID: "client", clientSecret: "very-secret-value", tokenURL: wns.tokenURL, allowedHostSuffixes: ["127.0.0.1"],
                    allowedPrivateNetworks: TestSupport.loopback, caFile: wns.caFile),
                httpClient: client, pinnedClients: pinned, logger: logs.logger(label: "securepush.hygiene"))
            _ = await good.send(TestSupport.push(token: channel, platform: .wns))
            let bad = try WNSProvider(
                configuration: WNSConfiguration(
                    clientID: "client", clientSecret: "wrong-secret-value", tokenURL: wns.tokenURL, allowedHostSuffixes: ["127.0.0.1"],
                    allowedPrivateNetworks: TestSupport.loopback, caFile: wns.caFile),
                httpClient: client, pinnedClients: pinned, logger: logs.logger(label: "securepush.hygiene"))
            _ = await bad.send(TestSupport.push(token: wns.makeChannelURI(), platform: .wns))
        }
        let accessTokens = Set(wns.requests.compactMap { $0.header("authorization") }.map { $0.replacingOccurrences(of: "Bearer ", with: "") })
        let lines = logs.all
        #expect(lines.count >= 2)
        for line in lines {
            #expect(!line.contains("very-secret-value"))
            #expect(!line.contains("wrong-secret-value"))
            #expect(!line.contains(channel))
            for token in accessTokens { #expect(!line.contains(token)) }
        }
        await wns.shutdown()
    }
}

extension WNSFixture: RecordingFixture {
    var delivered: [FakeRequest] { fake.delivered }
}
