import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import PostgresNIO
import SecurePushAPI
import SecurePushClient
import SecurePushCore
import SecurePushStore
import SecurePushTestSupport
import Testing

/// The device's sealing key over the API (registration, `PUT`/`DELETE /v1/devices/current/sealing-key`,
/// rotation) and the preview in reads (docs/security.md).
@Suite("Sealing keys and previews over the API")
struct SealingKeyRoutesTests {
    static func keyJSON(_ key: SealingKey) -> String {
        #"{"p256dh":"\#(key.publicKeyBase64URL)","auth":"\#(key.authBase64URL)"}"#
    }

    /// The device's stored public key in hex, as the dispatcher would seal to it.
    static func storedKey(_ db: TestDatabase, _ credential: String) async throws -> String? {
        let device = try #require(UUID(uuidString: String(credential.split(separator: ".")[0])))
        return try await db.scalar("SELECT encode(seal_public, 'hex') FROM securepush.devices WHERE id = \(device)")
    }

    static func hex(_ data: Data) -> String {
        data.map { String(format: "%02x", $0) }.joined()
    }

    @Test("a key given at registration, set, replaced by a rotation, dropped by a rotation without one and by DELETE; each audited")
    func keyLifecycle() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let first = SealingKey.generate()
            let registered = try await client.execute(
                uri: "/v1/devices", method: .post, headers: .bearer(try await api.userToken("ann")),
                body: ByteBuffer(string: #"{"platform":"simulated","token":"ann-1","sealing_key":\#(Self.keyJSON(first))}"#))
            #expect(registered.status == .created)
            #expect(registered.body.json["sealing"] as? Bool == true)
            var credential = "\(registered.body.json["device_id"] as? String ?? "").\(registered.body.json["device_secret"] as? String ?? "")"
            let expected = Self.hex(try #require(Data(base64URLEncoded: first.publicKeyBase64URL)))
            #expect(try await Self.storedKey(db, credential) == expected)

            // A rotation with a new key replaces it; the answer says so.
            let second = SealingKey.generate()
            let rotated = try await client.execute(
                uri: "/v1/devices/current/rotate", method: .post, headers: .bearer(credential),
                body: ByteBuffer(string: #"{"sealing_key":\#(Self.keyJSON(second))}"#))
            #expect(rotated.status == .ok && rotated.body.json["sealing"] as? Bool == true)
            credential = "\(rotated.body.json["device_id"] as? String ?? "").\(rotated.body.json["device_secret"] as? String ?? "")"
            #expect(try await Self.storedKey(db, credential) == Data(base64URLEncoded: second.publicKeyBase64URL).map(Self.hex))

            // Without one, the key goes with the old secret.
            let bare = try await client.execute(uri: "/v1/devices/current/rotate", method: .post, headers: .bearer(credential))
            #expect(bare.status == .ok && bare.body.json["sealing"] as? Bool == false)
            credential = "\(bare.body.json["device_id"] as? String ?? "").\(bare.body.json["device_secret"] as? String ?? "")"
            #expect(try await Self.storedKey(db, credential) == nil)

            // PUT sets it with the credential alone; DELETE drops it.
            let put = try await client.execute(
                uri: "/v1/devices/current/sealing-key", method: .put, headers: .bearer(credential), body: ByteBuffer(string: Self.keyJSON(first)))
            #expect(put.status == .noContent)
            #expect(try await Self.storedKey(db, credential) != nil)
            let deleted = try await client.execute(uri: "/v1/devices/current/sealing-key", method: .delete, headers: .bearer(credential))
            #expect(deleted.status == .noContent)
            #expect(try await Self.storedKey(db, credential) == nil)
            #expect(try await db.auditEvents("sealing_key_set") == 3)
            #expect(try await db.auditEvents("sealing_key_cleared") == 1)
            // The old credential is dead after a rotation.
            let unauthorized = try await client.execute(uri: "/v1/devices/current/sealing-key", method: .delete, headers: .bearer("x.y"))
            #expect(unauthorized.status == .unauthorized)
        }
    }

    @Test("malformed keys, a point off the curve, extra members and Web Push devices get 400 invalid_device; nothing is stored")
    func refusals() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let credential = try await registerDevice(client, api, user: "bea", token: "bea-1")
            let key = SealingKey.generate()
            // A point off the curve: the right size and prefix, random coordinates.
            let offCurve = (Data([4]) + Data((0..<64).map { _ in UInt8.random(in: 0...255) })).base64URLEncodedString
            let bodies = [
                #"{"p256dh":"\#(key.publicKeyBase64URL)"}"#,
                #"{"p256dh":"\#(key.publicKeyBase64URL)","auth":"c2hvcnQ"}"#,
                #"{"p256dh":"\#(offCurve)","auth":"\#(key.authBase64URL)"}"#,
                #"{"p256dh":"\#(key.publicKeyBase64URL)","auth":"\#(key.authBase64URL)","extra":"x"}"#,
                #"{"p256dh":1,"auth":"\#(key.authBase64URL)"}"#,
            ]
            for body in bodies {
                let response = try await client.execute(
                    uri: "/v1/devices/current/sealing-key", method: .put, headers: .bearer(credential), body: ByteBuffer(string: body))
                expectError(response, .badRequest, "invalid_device")
            }
            expectError(
                try await client.execute(
                    uri: "/v1/devices/current/sealing-key", method: .put, headers: .bearer(credential), body: ByteBuffer(string: "[")),
                .badRequest, "invalid_json")
            expectError(
                try await client.execute(
                    uri: "/v1/devices/current/rotate", method: .post, headers: .bearer(credential),
                    body: ByteBuffer(string: #"{"sealing_key":{"p256dh":"AA","auth":"AA"}}"#)),
                .badRequest, "invalid_device")
            let webPush = try await client.execute(
                uri: "/v1/devices", method: .post, headers: .bearer(try await api.userToken("bea")),
                body: ByteBuffer(
                    string:
                        #"{"platform":"webpush","token":"https://fcm.googleapis.com/fcm/send/x","p256dh":"\#(key.publicKeyBase64URL)","auth":"\#(key.authBase64URL)","sealing_key":\#(Self.keyJSON(key))}"#
                ))
            expectError(webPush, .badRequest, "invalid_device")
            let stored: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.devices WHERE seal_public IS NOT NULL")
            #expect(stored == 0)
        }
    }

    @Test("the read API returns the preview whatever the switch; it is erased with the payload")
    func previewInReads() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let credential = try await registerDevice(client, api, user: "cy", token: "cy-1")
            let id: UUID = try await db.scalar(
                #"SELECT securepush.enqueue('cy', '{"secret":1}'::jsonb, preview => '{"title":"Card payment","body":"€12.40"}'::jsonb)"#)
            let plain = try await db.enqueue(user: "cy", payload: "{}")
            let single = try await client.execute(uri: "/v1/notifications/\(id)", method: .get, headers: .bearer(credential))
            #expect((single.body.json["preview"] as? [String: Any])?["title"] as? String == "Card payment")
            let batch = try await client.execute(
                uri: "/v1/notifications/fetch", method: .post, headers: .bearer(credential),
                body: ByteBuffer(string: #"{"ids":["\#(id)","\#(plain)"]}"#))
            let found = batch.body.json["notifications"] as? [[String: Any]] ?? []
            #expect(found.count == 2)
            #expect(found.contains { ($0["preview"] as? [String: Any])?["body"] as? String == "€12.40" })
            #expect(found.contains { $0["preview"] is NSNull }, "null without one")
            let page = try await client.execute(uri: "/v1/notifications?include=payload", method: .get, headers: .bearer(credential))
            #expect((page.body.json["notifications"] as? [[String: Any]])?.count == 2)
            // Previews are producer JSON objects of at most 1024 bytes.
            for preview in [#"[1]"#, #"{"b":"\#(String(repeating: "y", count: 1100))"}"#] {
                await #expect(throws: (any Error).self) {
                    let _: UUID = try await db.scalar("SELECT securepush.enqueue('cy', '{}'::jsonb, preview => \(preview)::jsonb)")
                }
            }
            try await db.execute("UPDATE securepush.notifications SET payload = NULL, purged_at = now() WHERE id = \(id)")
            let erased: Bool = try await db.scalar("SELECT preview IS NULL FROM securepush.notifications WHERE id = \(id)")
            #expect(erased)
        }
    }
}
