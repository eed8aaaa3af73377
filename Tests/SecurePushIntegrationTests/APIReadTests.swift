import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import PostgresNIO
import SecurePushTestSupport
import Testing

@Suite("HTTP API: reading notifications")
struct APIReadTests {
    @Test("another user's notification answers exactly like an unknown one: 404")
    func foreignIsNotFound() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let mallory = try await registerDevice(client, api, user: "mallory", token: "m-1")
            let marker = "FOREIGN-\(UUID())"
            let alices = try await db.enqueue(user: "alice", payload: #"{"m":"\#(marker)"}"#)
            let foreign = try await client.execute(uri: "/v1/notifications/\(alices)", method: .get, headers: .bearer(mallory))
            let unknown = try await client.execute(uri: "/v1/notifications/\(UUID())", method: .get, headers: .bearer(mallory))
            expectError(foreign, .notFound, "not_found")
            #expect(foreign.body.text == unknown.body.text)
            #expect(foreign.status == unknown.status)
            #expect(!foreign.body.text.contains(marker))
            let readAt: Date? = try await db.scalar("SELECT read_at FROM securepush.notifications WHERE id = \(alices)")
            #expect(readAt == nil, "a foreign read marks nothing")
        }
    }

    @Test("expired and purged notifications answer 410; a malformed id answers 400")
    func goneAndMalformed() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let device = try await registerDevice(client, api, user: "gus", token: "g-1")
            let expiring = try await db.enqueue(user: "gus", payload: "{}", ttl: "200 milliseconds")
            let purged = try await db.enqueue(user: "gus", payload: #"{"keep":"no"}"#)
            #expect(try await client.execute(uri: "/v1/notifications/\(purged)", method: .get, headers: .bearer(device)).status == .ok)
            let count: Int32 = try await db.scalar("SELECT securepush.purge_payloads(interval '0 seconds')")
            #expect(count >= 1)
            let payload: String? = try await db.scalar("SELECT payload::text FROM securepush.notifications WHERE id = \(purged)")
            #expect(payload == nil)
            expectError(try await client.execute(uri: "/v1/notifications/\(purged)", method: .get, headers: .bearer(device)), .gone, "gone")
            try await db.eventually("the notification expired") {
                try await db.scalar("SELECT expires_at <= now() FROM securepush.notifications WHERE id = \(expiring)")
            }
            expectError(try await client.execute(uri: "/v1/notifications/\(expiring)", method: .get, headers: .bearer(device)), .gone, "gone")
            for bad in ["not-a-uuid", "123", "0f8fad5b-d9cb-469f-a165-70867728950", "%27%20OR%201%3D1"] {
                expectError(
                    try await client.execute(uri: "/v1/notifications/\(bad)", method: .get, headers: .bearer(device)), .badRequest, "invalid_id")
            }
        }
    }

    @Test("concurrent first reads from two devices of the user record exactly one read_at")
    func concurrentFirstReads() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let phone = try await registerDevice(client, api, user: "hal", token: "hal-phone")
            let tablet = try await registerDevice(client, api, user: "hal", token: "hal-tablet")
            for _ in 0..<10 {
                let id = try await db.enqueue(user: "hal", payload: "{}")
                async let first = client.execute(uri: "/v1/notifications/\(id)", method: .get, headers: .bearer(phone))
                async let second = client.execute(uri: "/v1/notifications/\(id)", method: .get, headers: .bearer(tablet))
                let (a, b) = try await (first, second)
                #expect(a.status == .ok && b.status == .ok)
                let readA = a.body.json["read_at"] as? String
                #expect(readA != nil)
                #expect(readA == b.body.json["read_at"] as? String)
                let readBy: UUID? = try await db.scalar("SELECT read_by_device FROM securepush.notifications WHERE id = \(id)")
                let ids = [phone, tablet].map { String($0.split(separator: ".")[0]) }
                #expect(ids.contains(readBy?.uuidString.lowercased() ?? ""))
            }
        }
    }

    @Test("bad bodies: malformed JSON 400, oversize 413, invalid platform options 400 — each in the error shape, nothing stored")
    func badBodies() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let token = try await api.userToken("ivy")
            let post = { (body: String) in
                try await client.execute(uri: "/v1/devices", method: .post, headers: .bearer(token), body: ByteBuffer(string: body))
            }
            expectError(try await post("{not json"), .badRequest, "invalid_json")
            expectError(try await post("[1,2]"), .badRequest, "invalid_json")
            expectError(
                try await post(#"{"platform":"simulated","token":"\#(String(repeating: "x", count: 20_000))"}"#), .contentTooLarge,
                "payload_too_large")
            expectError(try await post(#"{"platform":"carrier-pigeon","token":"x"}"#), .badRequest, "invalid_device")
            expectError(try await post(#"{"platform":"apns","token":"not-hex"}"#), .badRequest, "invalid_device")
            expectError(
                try await post(#"{"platform":"apns","token":"\#(String(repeating: "ab", count: 32))","environment":"staging"}"#), .badRequest,
                "invalid_device")
            expectError(
                try await post(#"{"platform":"webpush","token":"http://push.example.com/x","p256dh":"x","auth":"y"}"#), .badRequest,
                "invalid_device")
            expectError(try await post(#"{"platform":"webpush","token":"https://push.example.com/x"}"#), .badRequest, "invalid_device")
            expectError(try await post(#"{"platform":"simulated","token":"t","push_style":7}"#), .badRequest, "invalid_device")
            expectError(try await post(#"{"platform":"simulated","token":"t","colour":"red"}"#), .badRequest, "invalid_device")
            let devices: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.devices")
            #expect(devices == 0)
            let p256dh = "B" + String(repeating: "A", count: 86)
            let auth = String(repeating: "A", count: 22)
            let webpush = try await post(
                #"{"platform":"webpush","subscription":{"endpoint":"https://push.example.com/abc","keys":{"p256dh":"\#(p256dh)","auth":"\#(auth)"}}}"#
            )
            #expect(webpush.status == .created)
            let apns = try await post(
                #"{"platform":"apns","token":"\#(String(repeating: "ab", count: 32))","environment":"sandbox","push_style":"alert","topic":"com.example.bank"}"#
            )
            #expect(apns.status == .created)
            expectError(try await client.execute(uri: "/nowhere", method: .get), .notFound, "not_found")
        }
    }

    @Test("the unread listing pages newest first with a cursor, and reading removes an item")
    func unreadListing() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let device = try await registerDevice(client, api, user: "joy", token: "joy-1")
            var ids: [String] = []
            for index in 0..<7 {
                ids.append(try await db.enqueue(user: "joy", payload: #"{"n":\#(index)}"#).uuidString.lowercased())
            }
            _ = try await db.enqueue(user: "someone-else", payload: "{}")
            #expect(try await client.execute(uri: "/v1/notifications/\(ids[0])", method: .get, headers: .bearer(device)).status == .ok)
            var seen: [String] = []
            try await walkListing(client, device: device, query: "unread=true") { items in seen += items.compactMap { $0["id"] as? String } }
            #expect(seen == Array(ids.dropFirst().reversed()), "newest first, unread only, each once")
            let all = try await client.execute(uri: "/v1/notifications?limit=100", method: .get, headers: .bearer(device))
            #expect((all.body.json["notifications"] as? [[String: Any]])?.count == 7)
            expectError(
                try await client.execute(uri: "/v1/notifications?limit=0", method: .get, headers: .bearer(device)), .badRequest,
                "invalid_parameter")
            expectError(
                try await client.execute(uri: "/v1/notifications?unread=maybe", method: .get, headers: .bearer(device)), .badRequest,
                "invalid_parameter")
            expectError(
                try await client.execute(uri: "/v1/notifications?cursor=%%%", method: .get, headers: .bearer(device)), .badRequest,
                "invalid_cursor")
        }
    }

    @Test("unregistering a device cancels its pending deliveries")
    func unregisterCancelsDeliveries() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let device = try await registerDevice(client, api, user: "kim", token: "kim-1")
            for _ in 0..<3 { _ = try await db.enqueue(user: "kim", payload: "{}") }
            try await db.fanOut()
            let pending: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.deliveries")
            #expect(pending == 3)
            #expect(try await client.execute(uri: "/v1/devices/current", method: .delete, headers: .bearer(device)).status == .noContent)
            let left: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.deliveries")
            let cancelled: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.delivery_log WHERE outcome = 'cancelled'")
            #expect(left == 0)
            #expect(cancelled == 3)
        }
    }

    @Test("/status counts match the database")
    func statusMatchesDatabase() async throws {
        try await APIHarness.withDatabase { db, _, client in
            try await db.insertDevice(user: "lee", token: "lee-1")
            try await db.insertDevice(user: "lee", token: "lee-2")
            try await db.insertDevice(user: "lee", platform: "fcm", token: "lee-fcm-token-0123456789")
            for _ in 0..<4 { _ = try await db.enqueue(user: "lee", payload: "{}") }
            // Committed and not yet fanned out (no dispatcher runs here): waiting, and the lag counts them.
            try await db.execute("UPDATE securepush.notifications SET created_at = now() - interval '7 seconds'")
            let waiting = try #require(try await client.execute(uri: "/status", method: .get).body.json["queue"] as? [String: Any])
            #expect(waiting["awaiting_fan_out"] as? Int == 4 && waiting["pending"] as? Int == 0)
            let fanOutLag = try #require(waiting["oldest_pending_age_seconds"] as? Double)
            #expect(fanOutLag >= 7 && fanOutLag < 60)
            try await db.fanOut()
            try await db.execute("UPDATE securepush.deliveries SET run_at = now() - interval '5 seconds'")
            try await db.execute("UPDATE securepush.notifications SET created_at = now()")
            let status = try await client.execute(uri: "/status", method: .get)
            let queue = try #require(status.body.json["queue"] as? [String: Any])
            #expect(queue["awaiting_fan_out"] as? Int == 0)
            #expect(queue["pending"] as? Int == 12)
            #expect(queue["claimed"] as? Int == 0)
            let lag = try #require(queue["oldest_pending_age_seconds"] as? Double)
            #expect(lag >= 5 && lag < 60)
            let platforms = try #require(queue["by_platform"] as? [[String: Any]])
            #expect(platforms.first { $0["platform"] as? String == "fcm" }?["pending"] as? Int == 4)
            #expect(platforms.first { $0["platform"] as? String == "simulated" }?["pending"] as? Int == 8)
            let notifications = try #require(status.body.json["notifications"] as? [String: Any])
            #expect(notifications["stored"] as? Int == 4)
            #expect(notifications["unread"] as? Int == 4)
            #expect((status.body.json["database"] as? [String: Any])?["reachable"] as? Bool == true)
        }
    }
}
