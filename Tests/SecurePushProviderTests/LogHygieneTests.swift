import Crypto
import Foundation
import Logging
import SecurePushCore
import SecurePushFakes
import SecurePushProviders
import SecurePushTestSupport
import Testing

@Suite("Logs never carry tokens, JWTs or secrets")
struct LogHygieneTests {
    @Test("APNs successes, configuration errors and timeouts log no token or JWT")
    func apns() async throws {
        let logs = CapturedLogs()
        let key = P256.Signing.PrivateKey()
        let fake = try await FakeAPNsServer.start(keys: [.init(teamID: "TEAM123456", keyID: "KEY1234567", publicKey: key.publicKey)])
        let tokens = (0..<4).map { _ in TestSupport.randomHexToken() }
        fake.script(token: tokens[1], .reject(status: 400, reason: "BadTopic"))
        fake.script(token: tokens[2], .expireProviderTokenOnce)
        fake.script(token: tokens[3], .stall)
        try await TestSupport.withHTTPClient { client in
            let provider = try APNsProvider(
                configuration: APNsConfiguration(
                    apps: [.init(topic: "com.example.app", teamID: "TEAM123456", keyID: "KEY1234567", key: key)],
                    // 6 s: the sends before the stalled one (a TLS handshake among them) must not time out on a loaded machine.
                    productionBaseURL: fake.baseURL, sandboxBaseURL: fake.baseURL, caFile: fake.caFile, requestTimeout: .seconds(6)),
                httpClient: client, logger: logs.logger(label: "securepush.hygiene"))
            for token in tokens { _ = await provider.send(TestSupport.push(token: token)) }
        }
        let jwts = Set(fake.requests.compactMap { $0.header("authorization")?.replacingOccurrences(of: "bearer ", with: "") })
        let lines = logs.all
        #expect(lines.contains { $0.contains("APNs 400 BadTopic") })  // the error was logged ...
        for line in lines {
            for token in tokens { #expect(!line.contains(token)) }  // ... without the token
            for jwt in jwts { #expect(!line.contains(jwt)) }
            #expect(!line.contains(key.pemRepresentation))
        }
        await fake.shutdown()
    }
}
