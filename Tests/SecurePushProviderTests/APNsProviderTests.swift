import Crypto
import Foundation
import SecurePushCore
import SecurePushFakes
import SecurePushProviders
import Testing

@Suite("APNs provider against the fake APNs server")
struct APNsProviderTests {
    @Test("a silent push carries only the id, with background headers and a valid JWT")
    func silentPush() async throws {
        try await APNsFixture.with(style: .silent) { fixture in
            let token = TestSupport.randomHexToken()
            let push = TestSupport.push(token: token)
            let result = await fixture.provider.send(push)
            #expect(result.kind == "sent")
            let request = try #require(fixture.fake.delivered.first)
            #expect(request.path == "/3/device/\(token)")
            #expect(String(decoding: request.body, as: UTF8.self) == #"{"aps":{"content-available":1},"secureId":"\#(push.notificationID)"}"#)
            #expect(request.header("apns-push-type") == "background")
            #expect(request.header("apns-priority") == "5")
            #expect(request.header("apns-topic") == APNsFixture.topic)
            #expect(request.header("apns-collapse-id") == push.notificationID.description)
            #expect(request.header("apns-expiration") == String(Int(push.expiresAt.timeIntervalSince1970)))
            #expect(request.httpMajorVersion == 2)
            let jwt = try #require(request.header("authorization")?.replacingOccurrences(of: "bearer ", with: ""))
            let parsed = try #require(CompactJWTReader(jwt))
            #expect(parsed.header == ["alg": "ES256", "kid": APNsFixture.keyID])
            #expect(parsed.string("iss") == APNsFixture.teamID)
            #expect(parsed.verifiesES256(with: fixture.key.publicKey))
            if case .sent(let id) = result { #expect(id.flatMap(UUID.init(uuidString:)) != nil) }
        }
    }

    @Test("the alert form has generic text, mutable-content and priority 10")
    func alertPush() async throws {
        try await APNsFixture.with(style: .alert) { fixture in
            let push = TestSupport.push(token: TestSupport.randomHexToken())
            #expect(await fixture.provider.send(push).kind == "sent")
            let request = try #require(fixture.fake.delivered.first)
            #expect(request.header("apns-push-type") == "alert")
            #expect(request.header("apns-priority") == "10")
            let body = try #require(try JSONSerialization.jsonObject(with: request.body) as? [String: Any])
            #expect(body["secureId"] as? String == push.notificationID.description)
            let aps = try #require(body["aps"] as? [String: Any])
            #expect(aps["mutable-content"] as? Int == 1)
            let alert = try #require(aps["alert"] as? [String: String])
            #expect(alert["title"] == GenericAlert.defaultTitle)
            #expect(alert["body"] == GenericAlert.defaultBody)
            #expect(Set(body.keys) == ["aps", "secureId"])
        }
    }

    @Test("the device's push_style and topic options override the defaults")
    func deviceOptions() async throws {
        let second = P256.Signing.PrivateKey()
        let other = try APNsConfiguration.App(
            topic: "com.example.other", teamID: APNsFixture.teamID, keyID: "KEYOTHER01", p8PEM: second.pemRepresentation)
        try await APNsFixture.with(style: .silent, extraApps: [other]) { fixture in
            let push = TestSupport.push(token: TestSupport.randomHexToken(), options: ["push_style": "alert", "topic": "com.example.other"])
            #expect(await fixture.provider.send(push).kind == "sent")
            let request = try #require(fixture.fake.delivered.first)
            #expect(request.header("apns-topic") == "com.example.other")
            #expect(request.header("apns-push-type") == "alert")
            let jwt = try #require(CompactJWTReader(request.header("authorization")!.replacingOccurrences(of: "bearer ", with: "")))
            #expect(jwt.header["kid"] == "KEYOTHER01")

            let unknown = TestSupport.push(token: TestSupport.randomHexToken(), options: ["topic": "com.example.unknown"])
            #expect(await fixture.provider.send(unknown) == .failed(reason: "APNs topic not configured"))
        }
    }

    struct ErrorRow: Sendable, CustomTestStringConvertible {
        var status: Int
        var reason: String
        var expected: String
        var retryAfter: String? = nil
        /// For retries: whether it counts against the APNs circuit breaker.
        var scope: FailureScope? = nil
        var testDescription: String { "\(status) \(reason) → \(expected)" }
    }

    static let errorRows: [ErrorRow] = [
        ErrorRow(status: 400, reason: "BadDeviceToken", expected: "tokenInvalid"),
        ErrorRow(status: 400, reason: "DeviceTokenNotForTopic", expected: "tokenInvalid"),
        ErrorRow(status: 400, reason: "BadCollapseId", expected: "failed"),
        ErrorRow(status: 400, reason: "BadExpirationDate", expected: "failed"),
        ErrorRow(status: 400, reason: "BadMessageId", expected: "failed"),
        ErrorRow(status: 400, reason: "BadPriority", expected: "failed"),
        ErrorRow(status: 400, reason: "BadTopic", expected: "failed"),
        ErrorRow(status: 400, reason: "DuplicateHeaders", expected: "failed"),
        ErrorRow(status: 400, reason: "InvalidPushType", expected: "failed"),
        ErrorRow(status: 400, reason: "MissingDeviceToken", expected: "failed"),
        ErrorRow(status: 400, reason: "MissingTopic", expected: "failed"),
        ErrorRow(status: 400, reason: "PayloadEmpty", expected: "failed"),
        ErrorRow(status: 400, reason: "TopicDisallowed", expected: "failed"),
        ErrorRow(status: 400, reason: "IdleTimeout", expected: "retry", scope: .device),
        ErrorRow(status: 403, reason: "BadCertificate", expected: "failed"),
        ErrorRow(status: 403, reason: "BadCertificateEnvironment", expected: "failed"),
        ErrorRow(status: 403, reason: "Forbidden", expected: "failed"),
        ErrorRow(status: 403, reason: "InvalidProviderToken", expected: "failed"),
        ErrorRow(status: 403, reason: "MissingProviderToken", expected: "failed"),
        ErrorRow(status: 404, reason: "BadPath", expected: "failed"),
        ErrorRow(status: 405, reason: "MethodNotAllowed", expected: "failed"),
        ErrorRow(status: 410, reason: "Unregistered", expected: "tokenInvalid"),
        ErrorRow(status: 410, reason: "ExpiredToken", expected: "tokenInvalid"),
        ErrorRow(status: 413, reason: "PayloadTooLarge", expected: "failed"),
        // TooManyRequests is a per-device rate: it says nothing about APNs as a whole.
        ErrorRow(status: 429, reason: "TooManyRequests", expected: "retry", scope: .device),
        ErrorRow(status: 429, reason: "TooManyRequests", expected: "retry", retryAfter: "7", scope: .device),
        ErrorRow(status: 429, reason: "TooManyProviderTokenUpdates", expected: "retry", scope: .provider),
        ErrorRow(status: 500, reason: "InternalServerError", expected: "retry", scope: .provider),
        ErrorRow(status: 503, reason: "ServiceUnavailable", expected: "retry", scope: .provider),
        ErrorRow(status: 503, reason: "Shutdown", expected: "retry", retryAfter: "30", scope: .provider),
    ]

    @Test("every APNs error row maps to the right result", arguments: errorRows)
    func errorRow(_ row: ErrorRow) async throws {
        try await APNsFixture.with { fixture in
            let token = TestSupport.randomHexToken()
            fixture.fake.script(token: token, .reject(status: row.status, reason: row.reason, retryAfter: row.retryAfter))
            let result = await fixture.provider.send(TestSupport.push(token: token))
            #expect(result.kind == row.expected)
            #expect(result.reason == "APNs \(row.status) \(row.reason)")
            #expect(result.retryAfter == row.retryAfter.flatMap(Int.init).map { .seconds($0) })
            #expect(result.scope == row.scope)
            #expect(!result.reason.contains(token))
            #expect(fixture.fake.requests.count == 1)
        }
    }

    @Test("an unregistered token (410 with timestamp) is invalid; a non-hex token never leaves the process")
    func unregisteredAndMalformed() async throws {
        try await APNsFixture.with { fixture in
            let token = TestSupport.randomHexToken()
            fixture.fake.unregister(token: token)
            #expect(await fixture.provider.send(TestSupport.push(token: token)) == .tokenInvalid(reason: "APNs 410 Unregistered"))
            #expect(await fixture.provider.send(TestSupport.push(token: "abc/../../x?y")).kind == "tokenInvalid")
            #expect(fixture.fake.requests.count == 1)
        }
    }

    @Test("many concurrent sends share exactly one provider JWT")
    func tokenCaching() async throws {
        try await APNsFixture.with { fixture in
            let results = await TestSupport.sendConcurrently(40, through: fixture.provider) { _ in
                TestSupport.push(token: TestSupport.randomHexToken())
            }
            #expect(results.allSatisfy { $0.kind == "sent" })
            #expect(fixture.fake.delivered.count == 40)
            #expect(fixture.fake.distinctJWTs == 1)
            #expect(Set(fixture.fake.requests.compactMap { $0.header("authorization") }).count == 1)
        }
    }

    @Test("403 ExpiredProviderToken renews the JWT and the push is retried at once")
    func expiredProviderToken() async throws {
        try await APNsFixture.with { fixture in
            #expect(await fixture.provider.send(TestSupport.push(token: TestSupport.randomHexToken())).kind == "sent")
            let token = TestSupport.randomHexToken()
            fixture.fake.script(token: token, .expireProviderTokenOnce)
            #expect(await fixture.provider.send(TestSupport.push(token: token)).kind == "sent")
            #expect(fixture.fake.distinctJWTs == 2)
            let auths = fixture.fake.requests.compactMap { $0.header("authorization") }
            #expect(auths.count == 3)
            #expect(auths[1] != auths[2])
            // Later sends use the renewed token, which the fake still accepts.
            #expect(await fixture.provider.send(TestSupport.push(token: TestSupport.randomHexToken())).kind == "sent")
            #expect(fixture.fake.distinctJWTs == 2)

            // When the server expires every token, the next send renews once more and succeeds.
            fixture.fake.expireProviderTokens()
            #expect(await fixture.provider.send(TestSupport.push(token: TestSupport.randomHexToken())).kind == "sent")
            #expect(fixture.fake.distinctJWTs == 3)
        }
    }

    @Test("a stalled stream times out while other sends on the same connection succeed")
    func stalledStream() async throws {
        // Every send has this timeout, the five others too: on a loaded machine 2 s was not always enough for them.
        try await APNsFixture.with(requestTimeout: .seconds(6)) { fixture in
            #expect(await fixture.provider.send(TestSupport.push(token: TestSupport.randomHexToken())).kind == "sent")
            let stalled = TestSupport.randomHexToken()
            fixture.fake.script(token: stalled, .stall)
            async let stalledResult = fixture.provider.send(TestSupport.push(token: stalled))
            var others: [PushResult] = []
            for _ in 0..<5 {
                others.append(await fixture.provider.send(TestSupport.push(token: TestSupport.randomHexToken())))
            }
            let result = await stalledResult
            #expect(result == .retry(after: nil, reason: "APNs request timed out", scope: .provider))
            #expect(others.allSatisfy { $0.kind == "sent" })
            let stalledRequest = try #require(fixture.fake.requests.first { $0.path.hasSuffix(stalled) })
            #expect(fixture.fake.delivered.allSatisfy { $0.connectionID == stalledRequest.connectionID })
            #expect(fixture.fake.server.acceptedConnections == 1)
        }
    }

    @Test("sends keep flowing when the server lowers MAX_CONCURRENT_STREAMS while a stream is stuck")
    func lowerConcurrentStreams() async throws {
        // Each of the 20 sends queues behind the others on the one free stream, so on a loaded 2-core machine
        // the last one needs seconds: the timeout bounds the stalled stream, not the queue.
        try await APNsFixture.with(requestTimeout: .seconds(12)) { fixture in
            let stalled = TestSupport.randomHexToken()
            fixture.fake.script(token: stalled, .stall)
            async let stalledResult = fixture.provider.send(TestSupport.push(token: stalled))
            // Lower the limit only while the connection is busy: AsyncHTTPClient 1.37 asserts (debug builds)
            // when a SETTINGS change reaches an idle HTTP/2 connection (it schedules a second idle timer).
            while !fixture.fake.requests.contains(where: { $0.path.hasSuffix(stalled) }) {
                try await Task.sleep(for: .milliseconds(20))
            }
            fixture.fake.setMaxConcurrentStreams(2)
            let results = await TestSupport.sendConcurrently(20, through: fixture.provider) { _ in
                TestSupport.push(token: TestSupport.randomHexToken())
            }
            #expect(results.allSatisfy { $0.kind == "sent" })
            #expect(fixture.fake.delivered.count == 20)
            #expect(await stalledResult == .retry(after: nil, reason: "APNs request timed out", scope: .provider))
            #expect(fixture.fake.server.acceptedConnections == 1)
        }
    }

    @Test("after GOAWAY the provider reconnects")
    func goAway() async throws {
        try await APNsFixture.with { fixture in
            #expect(await fixture.provider.send(TestSupport.push(token: TestSupport.randomHexToken())).kind == "sent")
            fixture.fake.sendGoAway(reason: "Shutdown")
            // The GOAWAY races the next send; a send caught by it is a retry, never a failure.
            var outcome: PushResult = .retry(after: nil, reason: "not sent yet")
            for _ in 0..<50 {
                outcome = await fixture.provider.send(TestSupport.push(token: TestSupport.randomHexToken()))
                #expect(outcome.kind == "sent" || outcome.kind == "retry")
                if outcome.kind == "sent" && fixture.fake.server.acceptedConnections >= 2 { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(outcome.kind == "sent")
            #expect(fixture.fake.server.acceptedConnections >= 2)
        }
    }

    @Test("two teams never share a connection (APNs allows one team per connection)")
    func twoTeams() async throws {
        let otherKey = P256.Signing.PrivateKey()
        let other = try APNsConfiguration.App(topic: "com.other.app", teamID: "OTHERTEAM1", keyID: "OTHERKEY01", p8PEM: otherKey.pemRepresentation)
        try await APNsFixture.with(extraApps: [other]) { fixture in
            for _ in 0..<3 {
                #expect(await fixture.provider.send(TestSupport.push(token: TestSupport.randomHexToken())).kind == "sent")
                #expect(
                    await fixture.provider.send(TestSupport.push(token: TestSupport.randomHexToken(), options: ["topic": "com.other.app"])).kind
                        == "sent")
            }
            let connections = Dictionary(grouping: fixture.fake.delivered, by: \.connectionID)
            #expect(connections.count == 2)
            #expect(fixture.fake.distinctJWTs == 2)
        }
    }

    @Test("a push is refused, not mis-sent, when the device's environment is unknown; sandbox goes to the sandbox URL")
    func environments() async throws {
        let key = P256.Signing.PrivateKey()
        let signing = [FakeAPNsServer.SigningKey(teamID: APNsFixture.teamID, keyID: APNsFixture.keyID, publicKey: key.publicKey)]
        let production = try await FakeAPNsServer.start(keys: signing)
        let sandbox = try await FakeAPNsServer.start(keys: signing)
        try await TestSupport.withHTTPClient { client in
            let provider = try APNsProvider(
                configuration: APNsConfiguration(
                    apps: [try .init(topic: APNsFixture.topic, teamID: APNsFixture.teamID, keyID: APNsFixture.keyID, p8PEM: key.pemRepresentation)],
                    productionBaseURL: production.baseURL, sandboxBaseURL: sandbox.baseURL, caFile: production.caFile),
                httpClient: client, logger: TestSupport.logger)
            #expect(await provider.send(TestSupport.push(token: "aa", options: ["environment": "sandbox"])).kind == "sent")
            #expect(await provider.send(TestSupport.push(token: "bb", options: ["environment": "production"])).kind == "sent")
            #expect(await provider.send(TestSupport.push(token: "cc")).kind == "sent")
            #expect(await provider.send(TestSupport.push(token: "dd", options: ["environment": "staging"])).kind == "failed")
            #expect(sandbox.delivered.map(\.path) == ["/3/device/aa"])
            #expect(production.delivered.map(\.path) == ["/3/device/bb", "/3/device/cc"])
        }
        await production.shutdown()
        await sandbox.shutdown()
    }

    @Test("a transport failure (nothing listening) is a retry")
    func transportFailure() async throws {
        let key = P256.Signing.PrivateKey()
        let fake = try await FakeAPNsServer.start(keys: [])
        let url = fake.baseURL
        await fake.shutdown()
        try await TestSupport.withHTTPClient { client in
            let provider = try APNsProvider(
                configuration: APNsConfiguration(
                    apps: [try .init(topic: APNsFixture.topic, teamID: APNsFixture.teamID, keyID: APNsFixture.keyID, p8PEM: key.pemRepresentation)],
                    productionBaseURL: url, sandboxBaseURL: url, caFile: fake.caFile),
                httpClient: client, logger: TestSupport.logger)
            #expect(await provider.send(TestSupport.push(token: "aa")).kind == "retry")
        }
    }
}
