import Foundation
import SecurePushCore
import SecurePushFakes
import SecurePushProviders
import Testing
import _CryptoExtras

/// A fake FCM + OAuth server and a provider using a service-account key file pointed at it.
struct FCMFixture {
    static let projectID = "securepush-test"
    static let clientEmail = "pusher@securepush-test.iam.gserviceaccount.com"
    static let key: _RSA.Signing.PrivateKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)

    let fake: FakeFCMServer
    let provider: FCMProvider

    /// The service-account JSON, exactly in Google's key file layout.
    static func serviceAccountJSON(tokenURI: String) throws -> Data {
        try JSONSerialization.data(withJSONObject: [
            "type": "service_account", "project_id": projectID, "private_key_id": "0123456789abcdef",
            "private_key": key.pkcs8PEMRepresentation, "client_email": clientEmail, "client_id": "1234567890",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": tokenURI,
        ])
    }

    static func with<T>(
        requestTimeout: Duration = .seconds(10), envelopes: EnvelopeSettings = EnvelopeSettings(), _ body: (FCMFixture) async throws -> T
    ) async throws -> T {
        let fake = try await FakeFCMServer.start(projectID: projectID, clientEmail: clientEmail, publicKey: key.publicKey)
        return try await withShutdown(of: fake) {
            try await TestSupport.withHTTPClient { client in
                let account = try FCMServiceAccount(json: try serviceAccountJSON(tokenURI: fake.tokenURI))
                let provider = try FCMProvider(
                    configuration: FCMConfiguration(
                        serviceAccounts: [account], baseURL: fake.baseURL, caFile: fake.caFile, requestTimeout: requestTimeout,
                        envelopes: envelopes),
                    httpClient: client, logger: TestSupport.logger)
                return try await body(FCMFixture(fake: fake, provider: provider))
            }
        }
    }
}

@Suite("FCM HTTP v1 provider against the fake FCM and OAuth servers")
struct FCMProviderTests {
    @Test("a data-only message carries only the id and the generic text, with high priority, TTL, collapse key and an apns block")
    func idOnlyMessage() async throws {
        try await FCMFixture.with { fixture in
            let push = TestSupport.push(token: "fcm-token-1", platform: .fcm, ttl: 600)
            let result = await fixture.provider.send(push)
            guard case .sent(let name?) = result else {
                Issue.record("expected sent, got \(result)")
                return
            }
            #expect(name.hasPrefix("projects/\(FCMFixture.projectID)/messages/"))
            let body = try #require(fixture.fake.deliveredBodies.first)
            let message = try #require((try JSONSerialization.jsonObject(with: body) as? [String: Any])?["message"] as? [String: Any])
            #expect(Set(message.keys) == ["token", "data", "android", "apns"])
            #expect(message["token"] as? String == "fcm-token-1")
            #expect(
                message["data"] as? [String: String] == [
                    "secureId": push.notificationID.description, "title": GenericAlert.defaultTitle, "body": GenericAlert.defaultBody,
                    "urgency": "active",
                ])
            let android = try #require(message["android"] as? [String: String])
            #expect(android["priority"] == "high")
            #expect(android["collapse_key"] == nil, "no collapse key without the producer's: FCM keeps only four per offline device")
            let ttl = try #require(android["ttl"].flatMap { Int($0.dropLast()) })
            #expect((590...600).contains(ttl))
            #expect(android["ttl"]?.hasSuffix("s") == true)
            let apns = try #require(message["apns"] as? [String: Any])
            let headers = try #require(apns["headers"] as? [String: String])
            #expect(headers["apns-push-type"] == "alert")
            #expect(headers["apns-priority"] == "10")
            #expect(headers["apns-collapse-id"] == push.notificationID.description)
            let aps = try #require((apns["payload"] as? [String: Any])?["aps"] as? [String: Any])
            #expect(aps["mutable-content"] as? Int == 1)
        }
    }

    @Test("one access token is fetched and shared by many concurrent sends")
    func tokenCaching() async throws {
        try await FCMFixture.with { fixture in
            let results = await TestSupport.sendConcurrently(30, through: fixture.provider) { index in
                TestSupport.push(token: "t\(index)", platform: .fcm)
            }
            #expect(results.allSatisfy { $0.kind == "sent" })
            #expect(fixture.fake.issuedAccessTokens == 1)
            #expect(await fixture.provider.accessTokenFetches == 1)
        }
    }

    @Test("a token close to expiry is renewed before it is used")
    func renewBeforeExpiry() async throws {
        try await FCMFixture.with { fixture in
            fixture.fake.setTokenLifetime(seconds: 120)  // inside the 5-minute renewal margin
            #expect(await fixture.provider.send(TestSupport.push(token: "a", platform: .fcm)).kind == "sent")
            #expect(await fixture.provider.send(TestSupport.push(token: "b", platform: .fcm)).kind == "sent")
            #expect(fixture.fake.issuedAccessTokens == 2)
            fixture.fake.setTokenLifetime(seconds: 3600)
            #expect(await fixture.provider.send(TestSupport.push(token: "c", platform: .fcm)).kind == "sent")
            #expect(await fixture.provider.send(TestSupport.push(token: "d", platform: .fcm)).kind == "sent")
            #expect(fixture.fake.issuedAccessTokens == 3)
        }
    }

    @Test("401 UNAUTHENTICATED renews the access token and retries once")
    func revokedToken() async throws {
        try await FCMFixture.with { fixture in
            #expect(await fixture.provider.send(TestSupport.push(token: "a", platform: .fcm)).kind == "sent")
            fixture.fake.revokeAccessTokens()
            #expect(await fixture.provider.send(TestSupport.push(token: "b", platform: .fcm)).kind == "sent")
            #expect(fixture.fake.issuedAccessTokens == 2)
        }
    }

    struct ErrorRow: Sendable, CustomTestStringConvertible {
        var status: Int
        var errorCode: String?
        var expected: String
        var message = "error"
        var retryAfter: String? = nil
        var expectedAfter: Duration? = nil
        var fieldViolation: String? = nil
        /// For retries: whether it counts against the FCM circuit breaker.
        var scope: FailureScope? = nil
        var testDescription: String { "\(status) \(errorCode ?? "-") \(message) → \(expected)" }
    }

    static let rows: [ErrorRow] = [
        ErrorRow(status: 404, errorCode: "UNREGISTERED", expected: "tokenInvalid", message: "Requested entity was not found."),
        ErrorRow(
            status: 400, errorCode: "INVALID_ARGUMENT", expected: "tokenInvalid",
            message: "The registration token is not a valid FCM registration token"),
        ErrorRow(status: 400, errorCode: "INVALID_ARGUMENT", expected: "tokenInvalid", message: "Invalid value", fieldViolation: "message.token"),
        ErrorRow(status: 400, errorCode: "INVALID_ARGUMENT", expected: "failed", message: "Invalid value at 'message.data'"),
        ErrorRow(status: 403, errorCode: "SENDER_ID_MISMATCH", expected: "tokenInvalid", message: "SenderId mismatch"),
        ErrorRow(status: 429, errorCode: "QUOTA_EXCEEDED", expected: "retry", expectedAfter: .seconds(60), scope: .provider),
        ErrorRow(status: 429, errorCode: "QUOTA_EXCEEDED", expected: "retry", retryAfter: "120", expectedAfter: .seconds(120), scope: .provider),
        // One device's (or topic's) message rate is not the project's quota.
        ErrorRow(
            status: 429, errorCode: "QUOTA_EXCEEDED", expected: "retry", message: "Device message rate exceeded.", expectedAfter: .seconds(60),
            scope: .device),
        ErrorRow(status: 503, errorCode: "UNAVAILABLE", expected: "retry", scope: .provider),
        ErrorRow(status: 503, errorCode: "UNAVAILABLE", expected: "retry", retryAfter: "15", expectedAfter: .seconds(15), scope: .provider),
        ErrorRow(status: 500, errorCode: "INTERNAL", expected: "retry", scope: .provider),
        ErrorRow(status: 401, errorCode: "THIRD_PARTY_AUTH_ERROR", expected: "failed"),
        // The status text says NOT_FOUND but the errorCode decides.
        ErrorRow(status: 404, errorCode: nil, expected: "failed"),
        ErrorRow(status: 502, errorCode: nil, expected: "retry", scope: .provider),
    ]

    @Test("every FCM error row maps to the right result", arguments: rows)
    func errorRow(_ row: ErrorRow) async throws {
        try await FCMFixture.with { fixture in
            let token = "device-\(UUID().uuidString)"
            fixture.fake.script(
                token: token,
                .reject(
                    status: row.status, errorCode: row.errorCode, message: row.message, retryAfter: row.retryAfter, fieldViolation: row.fieldViolation
                ))
            let result = await fixture.provider.send(TestSupport.push(token: token, platform: .fcm))
            #expect(result.kind == row.expected)
            #expect(result.retryAfter == row.expectedAfter)
            #expect(result.scope == row.scope)
            #expect(result.reason.hasPrefix("FCM \(row.status)"))
            #expect(!result.reason.contains(token))
        }
    }

    @Test("a stalled FCM request is a retry after the deadline")
    func stalled() async throws {
        try await FCMFixture.with(requestTimeout: .seconds(2)) { fixture in
            // Warm up first, so the deadline under test is the send's, not the token fetch's.
            #expect(await fixture.provider.send(TestSupport.push(token: "fast", platform: .fcm)).kind == "sent")
            fixture.fake.script(token: "slow", .stall)
            #expect(
                await fixture.provider.send(TestSupport.push(token: "slow", platform: .fcm))
                    == .retry(after: nil, reason: "FCM request timed out", scope: .provider))
        }
    }

    @Test("the service-account file's problems are named without echoing values")
    func badServiceAccount() throws {
        #expect(throws: FCMServiceAccountError.self) { try FCMServiceAccount(json: Data("[]".utf8)) }
        let noEmail = try JSONSerialization.data(withJSONObject: ["project_id": "p", "private_key": FCMFixture.key.pkcs8PEMRepresentation])
        #expect { try FCMServiceAccount(json: noEmail) } throws: { "\($0)" == "FCM service account key has no client_email" }
        let badKey = try JSONSerialization.data(withJSONObject: [
            "project_id": "p", "client_email": "e", "private_key": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----",
        ])
        #expect { try FCMServiceAccount(json: badKey) } throws: { !"\($0)".contains("AAAA") }
    }
}
