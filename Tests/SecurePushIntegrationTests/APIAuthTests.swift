import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import JWTKit
import NIOCore
import PostgresNIO
import SecurePushAPI
import SecurePushTestSupport
import Testing

/// Registers a simulated device for `user` through the API and returns "device_id.secret".
func registerDevice(_ client: any TestClientProtocol, _ api: APIHarness, user: String, token: String) async throws -> String {
    let response = try await client.execute(
        uri: "/v1/devices", method: .post, headers: .bearer(try await api.userToken(user)),
        body: ByteBuffer(string: #"{"platform":"simulated","token":"\#(token)"}"#)
    )
    guard response.status == .created, let id = response.body.json["device_id"] as? String,
        let secret = response.body.json["device_secret"] as? String
    else { throw TestFailure("registration failed: \(response.status)") }
    return "\(id).\(secret)"
}

/// Walks `GET /v1/notifications?<query>&limit=<limit>` page by page with its cursor until `next_cursor` is null;
/// each page must answer 200 with at most `limit` items, and `eachPage` sees them in order.
func walkListing(
    _ client: any TestClientProtocol, device: String, query: String, limit: Int = 2, sourceLocation: SourceLocation = #_sourceLocation,
    _ eachPage: ([[String: Any]]) async throws -> Void
) async throws {
    var cursor: String?
    repeat {
        let uri = "/v1/notifications?\(query)&limit=\(limit)" + (cursor.map { "&cursor=\($0)" } ?? "")
        let page = try await client.execute(uri: uri, method: .get, headers: .bearer(device))
        #expect(page.status == .ok, sourceLocation: sourceLocation)
        let items = try #require(page.body.json["notifications"] as? [[String: Any]], sourceLocation: sourceLocation)
        #expect(items.count <= limit, sourceLocation: sourceLocation)
        try await eachPage(items)
        cursor = page.body.json["next_cursor"] as? String
    } while cursor != nil
}

func expectError(_ response: TestResponse, _ status: HTTPResponse.Status, _ code: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(response.status == status, sourceLocation: sourceLocation)
    let error = response.body.json["error"] as? [String: Any]
    #expect(error?["code"] as? String == code, "body: \(response.body.text)", sourceLocation: sourceLocation)
    #expect((error?["message"] as? String)?.isEmpty == false, sourceLocation: sourceLocation)
    #expect(response.headers[.contentType]?.hasPrefix("application/json") == true, sourceLocation: sourceLocation)
}

@Suite("HTTP API: authentication")
struct APIAuthTests {
    @Test("device credential matrix: missing, malformed, wrong secret, unknown device, revoked → 401 with a challenge")
    func deviceCredentialMatrix() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let credential = try await registerDevice(client, api, user: "ann", token: "ann-1")
            let id = try await db.enqueue(user: "ann", payload: "{}")
            let (deviceID, secret) = (String(credential.split(separator: ".")[0]), String(credential.split(separator: ".")[1]))
            let wrongSecret = String(secret.reversed())
            var cases: [(String, HTTPFields)] = [("missing", [:])]
            for (name, value) in [
                ("malformed", "Bearer not-a-credential"),
                ("basic scheme", "Basic \(Data(credential.utf8).base64EncodedString())"),
                ("wrong secret", "Bearer \(deviceID).\(wrongSecret)"),
                ("short secret", "Bearer \(deviceID).\(secret.prefix(20))"),
                ("unknown device", "Bearer \(UUID().uuidString.lowercased()).\(secret)"),
            ] {
                var fields = HTTPFields()
                fields[.authorization] = value
                cases.append((name, fields))
            }
            for (name, headers) in cases {
                let response = try await client.execute(uri: "/v1/notifications/\(id)", method: .get, headers: headers)
                expectError(response, .unauthorized, "unauthorized")
                #expect(response.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true, "\(name)")
            }
            #expect(try await client.execute(uri: "/v1/notifications/\(id)", method: .get, headers: .bearer(credential)).status == .ok)
            let revoked = try await client.execute(uri: "/v1/devices/current", method: .delete, headers: .bearer(credential))
            #expect(revoked.status == .noContent)
            let after = try await client.execute(uri: "/v1/notifications/\(id)", method: .get, headers: .bearer(credential))
            expectError(after, .unauthorized, "unauthorized")
        }
    }

    @Test("user token matrix: missing, expired, wrong key, alg none, garbage → 401; a valid one registers")
    func userTokenMatrix() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let body = ByteBuffer(string: #"{"platform":"simulated","token":"bob-1"}"#)
            let expired = try await api.userToken("bob", expiresIn: -60)
            let otherKey = JWTKeyCollection()
            await otherKey.add(hmac: HMACKey(from: "another-secret-0123456789abcdef-xyz"), digestAlgorithm: .sha256)
            let wrongKey = try await otherKey.sign(UserClaims(subject: "bob", expiresAt: Date().addingTimeInterval(600)))
            let es256 = JWTKeyCollection()
            await es256.add(ecdsa: ES256PrivateKey())
            let wrongAlgorithm = try await es256.sign(UserClaims(subject: "bob", expiresAt: Date().addingTimeInterval(600)))
            func b64(_ text: String) -> String {
                Data(text.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
                    .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            }
            let exp = Int(Date().addingTimeInterval(600).timeIntervalSince1970)
            let algNone = b64(#"{"alg":"none","typ":"JWT"}"#) + "." + b64(#"{"sub":"bob","exp":\#(exp)}"#) + "."
            let noExpiry = try await { () async throws -> String in
                let valid = try await api.userToken("bob")
                let parts = valid.split(separator: ".")
                return parts[0] + "." + b64(#"{"sub":"bob"}"#) + "." + parts[2]
            }()
            var cases: [(String, HTTPFields)] = [("missing", [.contentType: "application/json"])]
            for (name, token) in [
                ("expired", expired), ("wrong key", wrongKey), ("ES256 when HS256 is configured", wrongAlgorithm),
                ("alg none", algNone), ("tampered claims", noExpiry), ("garbage", "abc.def.ghi"),
            ] {
                cases.append((name, .bearer(token)))
            }
            for (name, headers) in cases {
                let response = try await client.execute(uri: "/v1/devices", method: .post, headers: headers, body: body)
                expectError(response, .unauthorized, "unauthorized")
                #expect(response.status == .unauthorized, "\(name)")
            }
            let devices: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.devices")
            #expect(devices == 0)
            let ok = try await client.execute(uri: "/v1/devices", method: .post, headers: .bearer(try await api.userToken("bob")), body: body)
            #expect(ok.status == .created)
        }
    }

    @Test("re-registering a token rotates the secret, re-binds the device to the caller and reactivates it")
    func reRegistration() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let first = try await registerDevice(client, api, user: "cat", token: "shared-phone")
            try await db.execute("UPDATE securepush.devices SET active = false")
            let second = try await registerDevice(client, api, user: "dog", token: "shared-phone")
            #expect(first.split(separator: ".")[0] == second.split(separator: ".")[0], "same device id")
            #expect(first != second, "new secret")
            let (owner, active): (String, Bool) = try await db.client.query(
                "SELECT user_id, active FROM securepush.devices", logger: db.logger
            ).collect()[0].decode((String, Bool).self)
            #expect(owner == "dog")
            #expect(active)
            let dogsNote = try await db.enqueue(user: "dog", payload: #"{"for":"dog"}"#)
            expectError(
                try await client.execute(uri: "/v1/notifications/\(dogsNote)", method: .get, headers: .bearer(first)),
                .unauthorized, "unauthorized")
            #expect(try await client.execute(uri: "/v1/notifications/\(dogsNote)", method: .get, headers: .bearer(second)).status == .ok)
        }
    }

    @Test("the SQL registration function returns a credential the API accepts; the secret is stored only as its SHA-256")
    func sqlRegistration() async throws {
        try await APIHarness.withDatabase { db, _, client in
            let (deviceID, secret): (UUID, String) = try await db.client.query(
                "SELECT device_id, device_secret FROM securepush.register_device('eve', 'simulated', 'eve-1', '{}')",
                logger: db.logger
            ).collect()[0].decode((UUID, String).self)
            let stored: ByteBuffer = try await db.scalar("SELECT secret_hash FROM securepush.devices WHERE id = \(deviceID)")
            var padded = secret.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while padded.count % 4 != 0 { padded += "=" }
            let raw = try #require(Data(base64Encoded: padded))
            #expect(raw.count == 32)
            #expect(Array(stored.readableBytesView) == Array(SHA256.hash(data: raw)))
            let id = try await db.enqueue(user: "eve", payload: #"{"x":1}"#)
            let response = try await client.execute(
                uri: "/v1/notifications/\(id)", method: .get, headers: .bearer("\(deviceID.uuidString.lowercased()).\(secret)"))
            #expect(response.status == .ok)
        }
    }
}
