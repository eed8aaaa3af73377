import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import PostgresNIO
import SecurePushTestSupport
import Testing

@Suite("HTTP API: catch-up in one round trip")
struct APIFetchTests {
    static func fetch(_ client: any TestClientProtocol, _ credential: String, _ body: String) async throws -> TestResponse {
        try await client.execute(uri: "/v1/notifications/fetch", method: .post, headers: .bearer(credential), body: ByteBuffer(string: body))
    }

    static func ids(_ list: [String]) -> String {
        #"{"ids":[\#(list.map { "\"\($0)\"" }.joined(separator: ","))]}"#
    }

    @Test("batch fetch: payloads in request order; foreign, unknown, expired, purged and repeated ids handled, never failing the call")
    func batchFetch() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let device = try await registerDevice(client, api, user: "ora", token: "ora-1")
            let first = try await db.enqueue(user: "ora", payload: #"{"n":1,"text":"première"}"#)
            let second = try await db.enqueue(user: "ora", payload: #"{"n":2}"#)
            let expiring = try await db.enqueue(user: "ora", payload: "{}", ttl: "200 milliseconds")
            let purged = try await db.enqueue(user: "ora", payload: #"{"n":4}"#)
            try await db.execute("UPDATE securepush.notifications SET payload = NULL, purged_at = now() WHERE id = \(purged)")
            let marker = "FOREIGN-\(UUID())"
            let foreign = try await db.enqueue(user: "pat", payload: #"{"m":"\#(marker)"}"#)
            let unknown = UUID()
            try await db.eventually("the notification expired") {
                try await db.scalar("SELECT expires_at <= now() FROM securepush.notifications WHERE id = \(expiring)")
            }
            let lower = { (id: UUID) in id.uuidString.lowercased() }
            let asked =
                [lower(first), lower(foreign), lower(unknown), lower(second), lower(first), lower(expiring), lower(purged)]
                + [second.uuidString.uppercased()]
            let response = try await Self.fetch(client, device, Self.ids(asked))
            #expect(response.status == .ok)
            let found = try #require(response.body.json["notifications"] as? [[String: Any]])
            #expect(found.map { $0["id"] as? String } == [lower(first), lower(second)], "in request order, each once")
            #expect((found[0]["payload"] as? [String: Any])?["text"] as? String == "première")
            #expect(found.allSatisfy { $0["read_at"] is String })
            let missing = try #require(response.body.json["missing"] as? [[String: String]])
            #expect(
                missing == [
                    ["id": lower(foreign), "reason": "not_found"], ["id": lower(unknown), "reason": "not_found"],
                    ["id": lower(expiring), "reason": "gone"], ["id": lower(purged), "reason": "gone"],
                ])
            let text = response.body.text
            #expect(text.contains(#"{"id":"\#(lower(foreign))","reason":"not_found"}"#))
            #expect(text.contains(#"{"id":"\#(lower(unknown))","reason":"not_found"}"#), "foreign and unknown look exactly alike")
            #expect(!text.contains(marker))

            let foreignTouched: Bool = try await db.scalar(
                """
                SELECT read_at IS NOT NULL OR EXISTS (SELECT 1 FROM securepush.fetches WHERE notification_id = \(foreign))
                FROM securepush.notifications WHERE id = \(foreign)
                """)
            #expect(!foreignTouched, "another user's notification is neither read nor fetched")
            let fetched: [String] = try await firstColumn(db, "SELECT notification_id::text FROM securepush.fetches")
            #expect(fetched.sorted() == [lower(first), lower(second)].sorted())

            // Again: the first read and first fetch keep their times.
            let before: [String] = try await firstColumn(
                db,
                "SELECT n.read_at::text || f.fetched_at::text FROM securepush.notifications n JOIN securepush.fetches f ON f.notification_id = n.id ORDER BY n.id"
            )
            let again = try await Self.fetch(client, device, Self.ids([lower(second), lower(first)]))
            #expect((again.body.json["notifications"] as? [[String: Any]])?.map { $0["id"] as? String } == [lower(second), lower(first)])
            #expect((again.body.json["missing"] as? [Any])?.isEmpty == true)
            let readAts = Dictionary(
                uniqueKeysWithValues: (again.body.json["notifications"] as? [[String: Any]] ?? []).map {
                    ($0["id"] as? String ?? "", $0["read_at"] as? String ?? "")
                })
            #expect(readAts[lower(first)] == found[0]["read_at"] as? String)
            let after: [String] = try await firstColumn(
                db,
                "SELECT n.read_at::text || f.fetched_at::text FROM securepush.notifications n JOIN securepush.fetches f ON f.notification_id = n.id ORDER BY n.id"
            )
            #expect(before == after)

            // Exactly 50 is allowed.
            let fifty = try await Self.fetch(client, device, Self.ids((0..<50).map { _ in lower(UUID()) }))
            #expect(fifty.status == .ok)
            #expect((fifty.body.json["missing"] as? [Any])?.count == 50)
        }
    }

    @Test("batch fetch: malformed input is a 400 with a precise message, and marks nothing")
    func batchFetchBadInput() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let device = try await registerDevice(client, api, user: "rex", token: "rex-1")
            let id = try await db.enqueue(user: "rex", payload: "{}").uuidString.lowercased()
            let cases: [(body: String, code: String, says: String)] = [
                ("{not json", "invalid_json", "JSON object"),
                (#"["\#(id)"]"#, "invalid_json", "JSON object"),
                ("{}", "invalid_ids", "\"ids\" is required"),
                (#"{"ids":"\#(id)"}"#, "invalid_ids", "\"ids\" is required"),
                (#"{"ids":[]}"#, "invalid_ids", "1 to 50"),
                (Self.ids((0..<51).map { _ in UUID().uuidString }), "invalid_ids", "it holds 51"),
                (#"{"ids":["\#(id)","not-a-uuid"]}"#, "invalid_ids", "\"ids[1]\""),
                (#"{"ids":["\#(id)",7]}"#, "invalid_ids", "\"ids[1]\""),
                (#"{"ids":["\#(id)",null]}"#, "invalid_ids", "\"ids[1]\""),
                (#"{"ids":["\#(id)"],"since":"yesterday"}"#, "invalid_ids", "Unknown field(s): since"),
            ]
            for (body, code, says) in cases {
                let response = try await Self.fetch(client, device, body)
                expectError(response, .badRequest, code)
                let message = (response.body.json["error"] as? [String: Any])?["message"] as? String ?? ""
                #expect(message.contains(says), "\(body.prefix(60)): \(message)")
                #expect(!message.contains("not-a-uuid") && !message.contains("yesterday"), "input is not echoed")
            }
            let read: Bool = try await db.scalar("SELECT read_at IS NOT NULL FROM securepush.notifications WHERE id = \(UUID(uuidString: id)!)")
            let fetches: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.fetches")
            #expect(!read && fetches == 0, "a refused request marks nothing")
            expectError(
                try await client.execute(uri: "/v1/notifications/fetch", method: .post, body: ByteBuffer(string: Self.ids([id]))),
                .unauthorized, "unauthorized")
            let wrongMethod = try await client.execute(uri: "/v1/notifications/fetch", method: .get, headers: .bearer(device))
            expectError(wrongMethod, .methodNotAllowed, "method_not_allowed")
            #expect(wrongMethod.headers[.allow] == "POST")
        }
    }

    @Test("concurrent batch fetches of overlapping sets from two devices: no deadlock, one read_at per notification")
    func concurrentBatches() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let phone = try await registerDevice(client, api, user: "sol", token: "sol-phone")
            let tablet = try await registerDevice(client, api, user: "sol", token: "sol-tablet")
            for _ in 0..<5 {
                var ids: [String] = []
                for _ in 0..<20 { ids.append(try await db.enqueue(user: "sol", payload: "{}").uuidString.lowercased()) }
                let (forward, backward) = (Self.ids(ids), Self.ids(ids.reversed()))
                async let a = Self.fetch(client, phone, forward)
                async let b = Self.fetch(client, tablet, backward)
                let (first, second) = try await (a, b)
                #expect(first.status == .ok && second.status == .ok)
                let readAt = { (response: TestResponse) in
                    Dictionary(
                        uniqueKeysWithValues: (response.body.json["notifications"] as? [[String: Any]] ?? []).map {
                            ($0["id"] as? String ?? "", $0["read_at"] as? String ?? "")
                        })
                }
                #expect(readAt(first).count == 20)
                #expect(readAt(first) == readAt(second), "both devices see the one first read")
            }
            let fetches: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.fetches")
            #expect(fetches == 200)
        }
    }

    @Test("the listing with include=payload returns payloads and marks exactly the returned items read and fetched")
    func listingWithPayloads() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let device = try await registerDevice(client, api, user: "tia", token: "tia-1")
            var ids: [String] = []
            for index in 0..<5 { ids.append(try await db.enqueue(user: "tia", payload: #"{"n":\#(index)}"#).uuidString.lowercased()) }
            let expired = try await db.enqueue(user: "tia", payload: "{}", ttl: "1 millisecond")
            try await db.eventually("the notification expired") {
                try await db.scalar("SELECT expires_at <= now() FROM securepush.notifications WHERE id = \(expired)")
            }
            _ = try await db.enqueue(user: "tom", payload: #"{"n":"not tia's"}"#)

            let plain = try await client.execute(uri: "/v1/notifications?unread=true", method: .get, headers: .bearer(device))
            #expect((plain.body.json["notifications"] as? [[String: Any]])?.allSatisfy { $0["payload"] == nil } == true)
            let untouched: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.fetches")
            #expect(untouched == 0, "the plain listing marks nothing")

            var seen: [String] = []
            try await walkListing(client, device: device, query: "unread=true&include=payload") { items in
                for item in items {
                    let id = try #require(item["id"] as? String)
                    let n = (item["payload"] as? [String: Any])?["n"] as? Int
                    #expect(n.map { ids[$0] == id } == true, "the item's own payload")
                    #expect(item["read_at"] is String, "returned items are read")
                }
                let returned = items.compactMap { $0["id"] as? String }
                seen += returned
                // Exactly what was returned so far is read and fetched: the look-ahead item is not.
                let read: [String] = try await firstColumn(
                    db, "SELECT id::text FROM securepush.notifications WHERE user_id = 'tia' AND read_at IS NOT NULL")
                let fetched: [String] = try await firstColumn(db, "SELECT notification_id::text FROM securepush.fetches")
                #expect(read.sorted() == seen.sorted())
                #expect(fetched.sorted() == seen.sorted())
            }
            #expect(seen == Array(ids.reversed()), "newest first, each once, expired and foreign left out")
            let rest = try await client.execute(uri: "/v1/notifications?unread=true&include=payload", method: .get, headers: .bearer(device))
            #expect((rest.body.json["notifications"] as? [Any])?.isEmpty == true)
            #expect(rest.body.json["next_cursor"] is NSNull)
            expectError(
                try await client.execute(uri: "/v1/notifications?include=body", method: .get, headers: .bearer(device)), .badRequest,
                "invalid_parameter")
        }
    }
}
