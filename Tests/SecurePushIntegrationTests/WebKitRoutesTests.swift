import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import SecurePushTestSupport
import Testing

@Suite("HTTP API: the Web kit's routes (VAPID key, demo page)")
struct WebKitRoutesTests {
    static func vapidKeyFile() throws -> (path: String, key: P256.Signing.PrivateKey) {
        let key = P256.Signing.PrivateKey()
        let path = FileManager.default.temporaryDirectory.appending(path: "vapid-\(UUID().uuidString).pem").path()
        try key.pemRepresentation.write(toFile: path, atomically: true, encoding: .utf8)
        return (path, key)
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    @Test("GET /v1/webpush/key serves the VAPID public key without a credential, even in an API-only process")
    func webPushKey() async throws {
        let (path, key) = try Self.vapidKeyFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await TestDatabase.with { db in
            try await APIHarness.with(db, environment: ["SECUREPUSH_WEBPUSH_VAPID_KEY_FILE": path, "SECUREPUSH_ROLE": "api"]) { _, client in
                let response = try await client.execute(uri: "/v1/webpush/key", method: .get)
                #expect(response.status == .ok)
                #expect(response.body.json["public_key"] as? String == Self.base64URL(key.publicKey.x963Representation))
            }
            try await APIHarness.with(db) { _, client in
                expectError(try await client.execute(uri: "/v1/webpush/key", method: .get), .notFound, "not_configured")
            }
        }
    }

    @Test("/demo/ serves the embedded kit only when SECUREPUSH_DEMO=on, same-origin only")
    func demo() async throws {
        try await TestDatabase.with { db in
            try await APIHarness.with(db) { _, client in
                let page = try await client.execute(uri: "/demo/", method: .get)
                let worker = try await client.execute(uri: "/demo/securepush-sw.js", method: .get)
                #expect(page.status == .notFound && worker.status == .notFound)
            }
            try await APIHarness.with(db, environment: ["SECUREPUSH_DEMO": "on"]) { _, client in
                // `/demo` redirects to `/demo/` (the test client follows it), so relative URLs resolve inside it.
                let redirected = try await client.execute(uri: "/demo", method: .get)
                #expect(redirected.status == .ok && redirected.body.text.contains("<title>SecurePush demo</title>"))
                let page = try await client.execute(uri: "/demo/", method: .get)
                #expect(page.status == .ok)
                #expect(page.headers[.contentType] == "text/html; charset=utf-8")
                #expect(page.body.text.contains("<script src=\"securepush.js\"></script>"))
                #expect(page.headers[.contentSecurityPolicy]?.contains("script-src 'self'") == true)
                let checkedIn = try String(contentsOfFile: Self.repository("clients/web/securepush-sw.js"), encoding: .utf8)
                for name in ["securepush.js", "securepush-sw.js", "securepush-store.js", "demo.js"] {
                    let file = try await client.execute(uri: "/demo/\(name)", method: .get)
                    #expect(file.status == .ok, "\(name)")
                    #expect(file.headers[.contentType] == "text/javascript; charset=utf-8", "\(name)")
                    if name == "securepush-sw.js" { #expect(file.body.text == checkedIn, "served byte for byte as checked in") }
                }
                for missing in ["/demo/nothing.js", "/demo/..%2Fsql", "/demo/index.htm"] {
                    expectError(try await client.execute(uri: missing, method: .get), .notFound, "not_found")
                }
            }
        }
    }

    static func repository(_ path: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: path).path()
    }
}
