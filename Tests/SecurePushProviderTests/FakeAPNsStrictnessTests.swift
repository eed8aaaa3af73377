import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import SecurePushFakes
import SecurePushProviders
import Testing

/// The fake must refuse what APNs refuses, or the provider tests could not fail.
@Suite("Fake APNs validates like APNs")
struct FakeAPNsStrictnessTests {
    static let teamA = "TEAMAAAAAA"
    static let teamB = "TEAMBBBBBB"

    struct Raw {
        var path = "/3/device/abcdef"
        var method: HTTPMethod = .POST
        var headers: [(String, String)] = [("apns-topic", "com.example.app"), ("apns-push-type", "background"), ("apns-priority", "5")]
        var body = #"{"aps":{"content-available":1},"secureId":"x"}"#
        var team = teamA
        var iat = Date()
        var signWithStranger = false
    }

    static func send(_ raw: Raw, fake: FakeAPNsServer, keys: [String: P256.Signing.PrivateKey], client: HTTPClient) async throws -> (Int, String?) {
        var request = HTTPClientRequest(url: fake.baseURL + raw.path)
        request.method = raw.method
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(fake.caFile))
        request.tlsConfiguration = tls
        let key = raw.signWithStranger ? P256.Signing.PrivateKey() : keys[raw.team]!
        let jwt = try jwtFor(team: raw.team, iat: raw.iat, key: key)
        request.headers.add(name: "authorization", value: "bearer \(jwt)")
        for (name, value) in raw.headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(string: raw.body))
        let response = try await client.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 65536)
        let reason = (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any])?["reason"] as? String
        return (Int(response.status.code), reason)
    }

    static func expect(
        _ raw: Raw, _ status: Int, _ reason: String, fake: FakeAPNsServer, keys: [String: P256.Signing.PrivateKey], client: HTTPClient,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let (gotStatus, gotReason) = try await send(raw, fake: fake, keys: keys, client: client)
        #expect(gotStatus == status, sourceLocation: sourceLocation)
        #expect(gotReason == reason, sourceLocation: sourceLocation)
    }

    static func jwtFor(team: String, iat: Date, key: P256.Signing.PrivateKey) throws -> String {
        let header = Data(#"{"alg":"ES256","kid":"K\#(team.prefix(9))"}"#.utf8).fakeBase64URL
        let claims = Data(#"{"iss":"\#(team)","iat":\#(Int(iat.timeIntervalSince1970))}"#.utf8).fakeBase64URL
        let signature = try key.signature(for: Data((header + "." + claims).utf8)).rawRepresentation.fakeBase64URL
        return header + "." + claims + "." + signature
    }

    @Test("bad requests get the APNs reasons")
    func rejections() async throws {
        let keys = [Self.teamA: P256.Signing.PrivateKey(), Self.teamB: P256.Signing.PrivateKey()]
        let fake = try await FakeAPNsServer.start(
            keys: keys.map { .init(teamID: $0.key, keyID: "K\($0.key.prefix(9))", publicKey: $0.value.publicKey) })
        try await TestSupport.withHTTPClient { client in
            var raw = Raw()
            #expect(try await Self.send(raw, fake: fake, keys: keys, client: client).0 == 200)

            raw = Raw(headers: [("apns-topic", "t"), ("apns-push-type", "background"), ("apns-priority", "10")])
            try await Self.expect(raw, 400, "BadPriority", fake: fake, keys: keys, client: client)
            raw = Raw(headers: [("apns-push-type", "background"), ("apns-priority", "5")])
            try await Self.expect(raw, 400, "MissingTopic", fake: fake, keys: keys, client: client)
            raw = Raw(headers: [("apns-topic", "t"), ("apns-collapse-id", String(repeating: "x", count: 65))])
            try await Self.expect(raw, 400, "BadCollapseId", fake: fake, keys: keys, client: client)
            raw = Raw(headers: [("apns-topic", "t"), ("apns-id", "not-a-uuid")])
            try await Self.expect(raw, 400, "BadMessageId", fake: fake, keys: keys, client: client)
            raw = Raw(path: "/3/device/xyz")
            try await Self.expect(raw, 400, "BadDeviceToken", fake: fake, keys: keys, client: client)
            raw = Raw(path: "/2/device/abcdef")
            try await Self.expect(raw, 404, "BadPath", fake: fake, keys: keys, client: client)
            raw = Raw(method: .PUT)
            try await Self.expect(raw, 405, "MethodNotAllowed", fake: fake, keys: keys, client: client)
            raw = Raw(body: "")
            try await Self.expect(raw, 400, "PayloadEmpty", fake: fake, keys: keys, client: client)
            raw = Raw(body: #"{"aps":{},"x":""# + String(repeating: "a", count: 4100) + #""}"#)
            try await Self.expect(raw, 413, "PayloadTooLarge", fake: fake, keys: keys, client: client)
            raw = Raw(iat: Date().addingTimeInterval(-3700))
            try await Self.expect(raw, 403, "ExpiredProviderToken", fake: fake, keys: keys, client: client)
            raw = Raw(signWithStranger: true)
            try await Self.expect(raw, 403, "InvalidProviderToken", fake: fake, keys: keys, client: client)
        }
        // A client of its own: every connection the check meets is one it opened.
        try await TestSupport.withHTTPClient { client in
            try await Self.expectOneTeamPerConnection(fake: fake, keys: keys, client: client)
        }
        await fake.shutdown()
    }

    /// A connection serves the team whose valid token it saw first; another team's token on it is refused. The
    /// same client with the same TLS configuration normally reuses its connection, but the pool may open a new
    /// one (seen under the thread sanitizer), so each answer is checked against the connection the fake
    /// recorded for it, and one request must have met a connection bound to the other team.
    static func expectOneTeamPerConnection(
        fake: FakeAPNsServer, keys: [String: P256.Signing.PrivateKey], client: HTTPClient, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        var teamOfConnection: [Int: String] = [:]
        var refusals = 0
        // Alternating teams until one request meets a connection bound to the other: under the thread sanitizer
        // the pool opened a fresh connection for each of five requests once (its stream accounting lags), so a
        // fixed five could all be first on their connections. Twenty give the pool every chance to reuse one.
        for attempt in 0..<20 where refusals == 0 {
            let team = attempt % 2 == 0 ? teamA : teamB
            let (status, reason) = try await send(Raw(team: team), fake: fake, keys: keys, client: client)
            let connection = try #require(fake.requests.last?.connectionID, sourceLocation: sourceLocation)
            if let bound = teamOfConnection[connection], bound != team {
                #expect(status == 403, sourceLocation: sourceLocation)
                #expect(reason == "InvalidProviderToken", sourceLocation: sourceLocation)
                refusals += 1
            } else {
                #expect(status == 200, "\(team) on connection \(connection): \(reason ?? "")", sourceLocation: sourceLocation)
                teamOfConnection[connection] = team
            }
        }
        #expect(refusals == 1, "no request met a connection bound to the other team", sourceLocation: sourceLocation)
    }
}
