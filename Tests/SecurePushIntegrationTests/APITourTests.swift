import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import PostgresNIO
import SecurePushCore
import SecurePushProviders
import SecurePushServer
import SecurePushTestSupport
import Testing

@Suite("HTTP API: the README tour")
struct APITourTests {
    @Test("register a device, enqueue with SQL, see an id-only push, fetch the payload, see it read in /status")
    func tour() async throws {
        try await TestDatabase.with { db in
            let logs = CapturedLogs()
            try await APIHarness.with(db, logs: logs) { api, client in
                let marker = "TOUR-MARKER-\(UUID().uuidString)"
                let token = try await api.userToken("alice")
                let registered = try await client.execute(
                    uri: "/v1/devices", method: .post, headers: .bearer(token),
                    body: ByteBuffer(string: #"{"platform":"simulated","token":"alice-phone"}"#)
                )
                #expect(registered.status == .created)
                let deviceID = try #require(registered.body.json["device_id"] as? String)
                let secret = try #require(registered.body.json["device_secret"] as? String)
                #expect(secret.count == 43, "256 random bits in base64url")
                let storedHash: ByteBuffer = try await db.scalar(
                    "SELECT secret_hash FROM securepush.devices WHERE id = \(UUID(uuidString: deviceID)!)")
                #expect(storedHash.readableBytes == 32)
                let storedText = try await db.scalar("SELECT row_to_json(d)::text FROM securepush.devices d", as: String.self)
                #expect(!storedText.contains(secret), "the secret itself is never stored")

                let harness = try DispatcherHarness(database: db, logs: logs)
                let id = try await db.enqueue(user: "alice", payload: #"{"title":"Payment received","secret":"\#(marker)"}"#)
                try await db.eventually("the push") { harness.pushes.count == 1 }
                let push = harness.pushes[0]
                #expect(push.notificationID == id.uuidString.lowercased())
                #expect(!push.body.contains(marker))
                // Exactly what the README's tour shows: the alert envelope with generic text and the unread badge.
                #expect(push.headers.first { $0.name == "apns-push-type" }?.value == "alert")
                #expect(
                    push.body
                        == #"{"aps":{"alert":{"body":"Open the app to read it.","title":"New notification"},"badge":1,"interruption-level":"active","mutable-content":1},"secureId":"\#(push.notificationID)"}"#
                )

                let credential: HTTPFields = .bearer("\(deviceID).\(secret)")
                let first = try await client.execute(uri: "/v1/notifications/\(id)", method: .get, headers: credential)
                #expect(first.status == .ok)
                let payload = try #require(first.body.json["payload"] as? [String: Any])
                #expect(payload["secret"] as? String == marker)
                let readAt = try #require(first.body.json["read_at"] as? String)
                let second = try await client.execute(uri: "/v1/notifications/\(id)", method: .get, headers: credential)
                #expect(second.body.json["read_at"] as? String == readAt, "later reads keep the original read_at")
                let readBy: UUID? = try await db.scalar("SELECT read_by_device FROM securepush.notifications WHERE id = \(id)")
                #expect(readBy?.uuidString.lowercased() == deviceID)

                let dispatcherID = harness.assembly.identity.id
                try await db.eventually("a heartbeat that counts the push, and the push in the history") {
                    let heartbeatSent: Int64 = try await db.scalar(
                        "SELECT coalesce((SELECT sent FROM securepush.dispatchers WHERE id = \(dispatcherID)), 0)")
                    let logged: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.delivery_log WHERE outcome = 'sent'")
                    return heartbeatSent == 1 && logged == 1
                }
                let status = try await client.execute(uri: "/status", method: .get)
                #expect(status.status == .ok)
                let notifications = try #require(status.body.json["notifications"] as? [String: Any])
                #expect(notifications["unread"] as? Int == 0)
                #expect(notifications["stored"] as? Int == 1)
                let lastMinute = try #require(status.body.json["last_minute"] as? [String: Any])
                #expect(lastMinute["sent"] as? Int == 1)
                let dispatchers = try #require(status.body.json["dispatchers"] as? [[String: Any]])
                #expect(dispatchers.contains { $0["state"] as? String == "alive" && $0["sent"] as? Int == 1 })
                #expect(!status.body.text.contains("alice"), "no user id in /status")
                #expect(!status.body.text.contains("alice-phone"), "no token in /status")
                await harness.stop()

                for line in logs.all {
                    #expect(!line.contains(marker), "payload in a log line: \(line)")
                    #expect(!line.contains(secret), "device secret in a log line")
                    #expect(!line.contains("alice-phone"), "push token in a log line")
                }
            }
        }
    }

    @Test("healthz, readyz and metrics")
    func health() async throws {
        try await APIHarness.withDatabase { db, _, client in
            #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)
            #expect(try await client.execute(uri: "/readyz", method: .get).status == .ok)
            let metrics = try await client.execute(uri: "/metrics", method: .get)
            #expect(metrics.status == .ok)
            try await db.execute("DELETE FROM securepush.schema_migrations WHERE version = 2")
            let notReady = try await client.execute(uri: "/readyz", method: .get)
            #expect(notReady.status == .serviceUnavailable)
            #expect((notReady.body.json["error"] as? [String: Any])?["code"] as? String == "not_ready")
        }
    }
}
