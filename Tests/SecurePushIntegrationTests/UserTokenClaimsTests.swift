import Crypto
import Foundation
import SecurePushAPI
import SecurePushCore
import SecurePushTestSupport
import Testing

@Suite("User tokens: the header's alg, nbf, iat, the maximum lifetime and the subject")
struct UserTokenClaimsTests {
    static let secret = APIHarness.jwtSecret

    /// A compact JWT with any header and claims, MAC'd with HS256 and the test secret (a valid MAC).
    static func token(header: [String: Any], claims: [String: Any]) throws -> String {
        let head = try JSONSerialization.data(withJSONObject: header).base64URLEncodedString
        let body = try JSONSerialization.data(withJSONObject: claims).base64URLEncodedString
        let input = "\(head).\(body)"
        let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return "\(input).\(Data(mac).base64URLEncodedString)"
    }

    static func claims(_ extra: [String: Any] = [:], sub: String = "alice") -> [String: Any] {
        ["sub": sub, "exp": Date().timeIntervalSince1970 + 600].merging(extra) { $1 }
    }

    static func verifier(maxLifetime: Duration? = nil) async throws -> UserTokenVerifier {
        try await UserTokenVerifier(key: .hs256(secret: secret), issuer: nil, audience: nil, maxLifetime: maxLifetime)
    }

    @Test("a token signed with the configured algorithm and plain claims is accepted")
    func accepted() async throws {
        let token = try Self.token(header: ["alg": "HS256", "typ": "JWT"], claims: Self.claims())
        #expect(try await Self.verifier().userID(from: token) == "alice")
    }

    @Test("the header's alg must equal the configured one, whatever the MAC", arguments: ["HS384", "hs256", "none", "ES256", "XYZ"])
    func algorithm(label: String) async throws {
        let token = try Self.token(header: ["alg": label, "typ": "JWT"], claims: Self.claims())
        await #expect(throws: (any Error).self) { try await Self.verifier().userID(from: token) }
    }

    @Test("a header without alg is refused")
    func missingAlgorithm() async throws {
        let token = try Self.token(header: ["typ": "JWT"], claims: Self.claims())
        await #expect(throws: (any Error).self) { try await Self.verifier().userID(from: token) }
    }

    @Test("nbf and iat in the future beyond the 60 s leeway are refused; within it they pass")
    func notBeforeAndIssuedAt() async throws {
        let now = Date().timeIntervalSince1970
        let verifier = try await Self.verifier()
        for claim in ["nbf", "iat"] {
            let future = try Self.token(header: ["alg": "HS256"], claims: Self.claims([claim: now + 300]))
            await #expect(throws: (any Error).self, "\(claim) 5 minutes ahead") { try await verifier.userID(from: future) }
            let skewed = try Self.token(header: ["alg": "HS256"], claims: Self.claims([claim: now + 30]))
            #expect(try await verifier.userID(from: skewed) == "alice", "\(claim) 30 s ahead is clock skew")
            let past = try Self.token(header: ["alg": "HS256"], claims: Self.claims([claim: now - 300]))
            #expect(try await verifier.userID(from: past) == "alice")
        }
    }

    @Test("SECUREPUSH_USER_JWT_MAX_LIFETIME bounds exp - iat (or exp - now without iat)")
    func maxLifetime() async throws {
        let now = Date().timeIntervalSince1970
        let verifier = try await Self.verifier(maxLifetime: .seconds(3600))
        let short = try Self.token(header: ["alg": "HS256"], claims: ["sub": "a", "iat": now, "exp": now + 1800])
        #expect(try await verifier.userID(from: short) == "a")
        let long = try Self.token(header: ["alg": "HS256"], claims: ["sub": "a", "iat": now, "exp": now + 86_400])
        await #expect(throws: (any Error).self) { try await verifier.userID(from: long) }
        let longWithoutIat = try Self.token(header: ["alg": "HS256"], claims: ["sub": "a", "exp": now + 86_400])
        await #expect(throws: (any Error).self) { try await verifier.userID(from: longWithoutIat) }
        let unbounded = try await Self.verifier()
        #expect(try await unbounded.userID(from: long) == "a", "no bound unless configured")
    }

    @Test(
        "a subject with NUL or another control character, or over 256 code points, is refused", arguments: ["a\u{0}b", "a\nb", "\u{7f}", "a\u{200B}"])
    func subject(sub: String) async throws {
        let token = try Self.token(header: ["alg": "HS256"], claims: Self.claims(sub: sub))
        await #expect(throws: (any Error).self) { try await Self.verifier().userID(from: token) }
    }

    @Test("a subject of 64 graphemes but more than 256 code points is refused")
    func longSubject() async throws {
        let sub = String(repeating: "e\u{301}\u{302}\u{303}\u{304}", count: 64)
        let token = try Self.token(header: ["alg": "HS256"], claims: Self.claims(sub: sub))
        await #expect(throws: (any Error).self) { try await Self.verifier().userID(from: token) }
    }

    @Test("claims that name a member twice are refused (the first would win in the decoder)")
    func duplicateClaims() async throws {
        let head = try JSONSerialization.data(withJSONObject: ["alg": "HS256"]).base64URLEncodedString
        let exp = Int(Date().timeIntervalSince1970) + 600
        for claims in [#"{"sub":"dup","sub":"a\u0000b","exp":\#(exp)}"#, #"{"sub":"x","exp":\#(exp),"exp":1}"#] {
            let input = "\(head).\(Data(claims.utf8).base64URLEncodedString)"
            let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: Data(Self.secret.utf8)))
            let token = "\(input).\(Data(mac).base64URLEncodedString)"
            await #expect(throws: (any Error).self, "\(claims)") { try await Self.verifier().userID(from: token) }
        }
        // Nested objects may reuse a top-level name.
        let nested = #"{"sub":"n","exp":\#(exp),"ctx":{"sub":"inner"}}"#
        let input = "\(head).\(Data(nested.utf8).base64URLEncodedString)"
        let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: Data(Self.secret.utf8)))
        #expect(try await Self.verifier().userID(from: "\(input).\(Data(mac).base64URLEncodedString)") == "n")
    }

    @Test("claims of the wrong type are refused")
    func wrongTypes() async throws {
        let wrong: [[String: Any]] = [["sub": 7], ["exp": "soon"], ["nbf": "x"], ["iat": [1]]]
        for extra in wrong {
            let token = try Self.token(header: ["alg": "HS256"], claims: Self.claims(extra))
            await #expect(throws: (any Error).self, "\(extra.keys.first ?? "")") { try await Self.verifier().userID(from: token) }
        }
    }
}
