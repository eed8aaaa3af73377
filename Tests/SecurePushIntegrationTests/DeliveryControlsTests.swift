import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationEssentialsCompat
import NIOHTTP1
import PostgresNIO
import SecurePushProviders
import SecurePushTestSupport
import Testing

/// Delivery controls against the real binary (`serve --role all`, the simulated platform writing every push
/// to an outbox file): scheduled and cancelled sends, quiet hours, collapse, muted categories, a token
/// replaced with the device credential alone, and CORS for the device routes.
@Suite("Delivery controls, end to end", .serialized)
struct DeliveryControlsTests {
    /// A running server, its outbox, and HTTP helpers.
    struct Served {
        let port: Int
        let outbox: URL
        let db: TestDatabase

        /// Every push the server made so far.
        func pushes() -> [SimulatedPush] {
            let text = (try? String(contentsOf: outbox, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap { try? JSONDecoder().decode(SimulatedPush.self, from: Data($0.utf8)) }
        }

        /// The pushes of notification `id`.
        func pushes(of id: UUID) -> [SimulatedPush] {
            pushes().filter { $0.notificationID == id.uuidString.lowercased() }
        }

        /// Sends a request; returns the status, the headers and the body.
        func request(
            _ method: HTTPMethod, _ path: String, credential: String? = nil, body: String? = nil, headers: [(String, String)] = []
        ) async throws -> (status: UInt, headers: HTTPHeaders, body: String) {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
            request.method = method
            if let credential { request.headers.add(name: "Authorization", value: "Bearer \(credential)") }
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            if let body {
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(string: body))
            }
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            return (response.status.code, response.headers, String(buffer: try await response.body.collect(upTo: 1 << 20)))
        }

        /// Registers a simulated device for `user`; returns its credential (`<id>.<secret>`).
        func register(user: String, token: String) async throws -> String {
            let userToken = try await HostileInputTests.userToken(user)
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/devices")
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer \(userToken)")
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: #"{"platform":"simulated","token":"\#(token)"}"#))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            #expect(response.status == .created)
            let object = try JSONSerialization.jsonObject(with: Data(buffer: try await response.body.collect(upTo: 1 << 16))) as? [String: Any]
            return "\(try #require(object?["device_id"] as? String)).\(try #require(object?["device_secret"] as? String))"
        }

        /// Waits until notification `id` was pushed.
        func waitForPush(of id: UUID, timeout: Duration = .seconds(30)) async throws {
            try await eventually("notification \(id) pushed", timeout: timeout) { !pushes(of: id).isEmpty }
        }
    }

    /// Runs the real binary with the simulated platform and `environment`.
    static func withServed(_ environment: [String: String] = [:], _ body: @escaping @Sendable (Served) async throws -> Void) async throws {
        try await TestDatabase.with { db in
            let outbox = FileManager.default.temporaryDirectory.appendingPathComponent("securepush-controls-\(UUID()).jsonl")
            defer { try? FileManager.default.removeItem(at: outbox) }
            let base = ["SECUREPUSH_PROVIDERS": "simulated", "SECUREPUSH_SIMULATED_OUTBOX": outbox.path]
            try await withServedAPI(db, role: "all", environment: base.merging(environment) { $1 }) { port in
                try await eventually("the server answers", timeout: .seconds(30)) {
                    (try? await DispatcherOperationsTests.get(port, "/healthz"))?.status == 200
                }
                try await body(Served(port: port, outbox: outbox, db: db))
            }
        }
    }

    /// Seconds until `instant` on the database's clock (negative once past).
    static func secondsUntil(_ db: TestDatabase, _ instant: String) async throws -> Double {
        try await db.scalar("SELECT extract(epoch FROM \(instant)::timestamptz - now())::float8")
    }

    @Test("a scheduled notification is pushed at its time and not before, and cannot be read before it")
    func scheduled() async throws {
        try await Self.withServed { served in
            let device = try await served.register(user: "sched", token: "sched-phone")
            let id: UUID = try await served.db.scalar(
                """
                SELECT securepush.enqueue(user_id => 'sched', payload => '{"n":1}'::jsonb, deliver_at => now() + interval '3 seconds')
                """)
            let deliverAt: String = try await served.db.scalar("SELECT deliver_at::text FROM securepush.notifications WHERE id = \(id)")
            let early = try await served.request(.GET, "/v1/notifications/\(id)", credential: device)
            #expect(early.status == 404, "not readable before deliver_at: \(early.body)")
            let status = try await DispatcherOperationsTests.get(served.port, "/status")
            let report = try JSONSerialization.jsonObject(with: Data(status.body.utf8)) as? [String: Any]
            #expect((report?["notifications"] as? [String: Any])?["scheduled"] as? Int == 1, "/status counts it: \(status.body.prefix(400))")
            // Watch the outbox until the database's clock passes deliver_at: nothing may appear before.
            while try await Self.secondsUntil(served.db, deliverAt) > 0 {
                #expect(served.pushes(of: id).isEmpty, "pushed before deliver_at")
                try await Task.sleep(for: .milliseconds(50))
            }
            try await served.waitForPush(of: id)
            try await served.db.eventually("the push's outcome logged") {
                try await served.db.scalar("SELECT count(*)::bigint FROM securepush.delivery_log WHERE notification_id = \(id)") == Int64(1)
            }
            let pushedLate: Bool = try await served.db.scalar(
                """
                SELECT bool_and(l.finished_at >= n.deliver_at) FROM securepush.delivery_log l
                JOIN securepush.notifications n ON n.id = l.notification_id WHERE l.notification_id = \(id)
                """)
            #expect(pushedLate, "the push's log row is after deliver_at")
            #expect(try await served.request(.GET, "/v1/notifications/\(id)", credential: device).status == 200)
        }
    }

    @Test("a cancelled notification is never pushed and its payload is gone")
    func cancelled() async throws {
        try await Self.withServed { served in
            let device = try await served.register(user: "cancel", token: "cancel-phone")
            let (cancelled, witness): (UUID, UUID) = try await (
                served.db.scalar(
                    """
                    SELECT securepush.enqueue(user_id => 'cancel', payload => '{"secret":"CANCELLED-PAYLOAD"}'::jsonb,
                                              deliver_at => now() + interval '6 seconds', idempotency_key => 'order-7')
                    """),
                served.db.scalar(
                    "SELECT securepush.enqueue(user_id => 'cancel', payload => '{}'::jsonb, deliver_at => now() + interval '6 seconds')")
            )
            let rows = try await served.db.client.query(
                "SELECT id, cancelled_deliveries, in_flight, already_pushed, payload_purged FROM securepush.cancel('cancel', 'order-7')",
                logger: served.db.logger
            ).collect()
            let report = try #require(rows.first).decode((UUID, Int32, Int32, Int32, Bool).self)
            #expect(report.0 == cancelled && report.1 == 1 && report.2 == 0 && report.3 == 0 && report.4, "\(report)")
            // The witness, due at the same moment, shows the scheduler has run past the cancelled one's time.
            try await served.waitForPush(of: witness)
            #expect(served.pushes(of: cancelled).isEmpty, "the cancelled notification was pushed")
            let payloadGone: Bool = try await served.db.scalar(
                "SELECT payload IS NULL AND purged_at IS NOT NULL AND cancelled_at IS NOT NULL FROM securepush.notifications WHERE id = \(cancelled)")
            #expect(payloadGone)
            #expect(try await served.request(.GET, "/v1/notifications/\(cancelled)", credential: device).status == 410)
            let again = try await served.db.client.query(
                "SELECT cancelled_deliveries, payload_purged FROM securepush.cancel(\(cancelled))", logger: served.db.logger
            )
            .collect()
            let (count, purged) = try #require(again.first).decode((Int32, Bool).self)
            #expect(count == 0 && !purged, "cancelling again does nothing")
            #expect(!(try String(contentsOf: served.outbox, encoding: .utf8)).contains("CANCELLED-PAYLOAD"))
        }
    }

    @Test("quiet hours defer a push to the window's end; a time-sensitive one is not deferred")
    func quietHours() async throws {
        try await Self.withServed { served in
            let device = try await served.register(user: "quiet", token: "quiet-phone")
            // A window from an hour ago to the next whole minute (at least 5 s away), in UTC on the database's clock.
            let window = try await served.db.client.query(
                """
                SELECT to_char(e - interval '61 minutes', 'HH24:MI'), to_char(e, 'HH24:MI'), (e AT TIME ZONE 'UTC')::text
                FROM (SELECT date_trunc('minute', (now() AT TIME ZONE 'UTC') + interval '5 seconds') + interval '1 minute' AS e) w
                """, logger: served.db.logger
            ).collect()
            let (start, end, windowEnd) = try #require(window.first).decode((String, String, String).self)
            let set = try await served.request(
                .PUT, "/v1/quiet-hours", credential: device, body: #"{"time_zone":"UTC","start":"\#(start)","end":"\#(end)"}"#)
            #expect(set.status == 200, "\(set.body)")
            let held = try await served.db.enqueue(user: "quiet", payload: #"{"n":"held"}"#)
            // One that expires before the window ends is never pushed, and the history says so.
            let lapsed = try await served.db.enqueue(user: "quiet", payload: "{}", ttl: "2 seconds")
            try await served.db.fanOut()
            let lapsedLog: String = try await served.db.scalar(
                "SELECT outcome || ': ' || last_error FROM securepush.delivery_log WHERE notification_id = \(lapsed)")
            #expect(lapsedLog == "expired: quiet hours end after the notification expires")
            let urgent: UUID = try await served.db.scalar(
                "SELECT securepush.enqueue(user_id => 'quiet', payload => '{}'::jsonb, urgency => 'time_sensitive')")
            try await served.waitForPush(of: urgent)
            let heldRunAt: String = try await served.db.scalar("SELECT run_at::text FROM securepush.deliveries WHERE notification_id = \(held)")
            #expect(heldRunAt == windowEnd, "deferred to the window's end")
            while try await Self.secondsUntil(served.db, windowEnd) > 0 {
                #expect(served.pushes(of: held).isEmpty, "pushed inside the quiet window")
                try await Task.sleep(for: .milliseconds(100))
            }
            try await served.waitForPush(of: held)
            let urgentHeader = served.pushes(of: urgent).first?.headers.first { $0.name == "apns-priority" }?.value
            #expect(urgentHeader == "10")
            #expect(served.pushes(of: urgent).first?.body.contains(#""interruption-level":"time-sensitive""#) == true)
            let got = try await served.request(.GET, "/v1/quiet-hours", credential: device)
            #expect(got.body.contains(#""start":"\#(start)""#), "\(got.body)")
        }
    }

    @Test("three notifications with one collapse key: one push, two superseded, the digest in the envelope, the key nowhere")
    func collapse() async throws {
        try await Self.withServed { served in
            _ = try await served.register(user: "coll", token: "coll-phone")
            let key = "balance-COLLAPSEKEY-91"
            // One transaction, so no dispatcher claims between them.
            let ids: [UUID] = try await served.db.client.withTransaction(logger: served.db.logger) { connection in
                var ids: [UUID] = []
                for n in 1...3 {
                    let rows = try await connection.query(
                        "SELECT securepush.enqueue(user_id => 'coll', payload => \(#"{"n":\#(n)}"#)::jsonb, collapse_key => \(key))",
                        logger: served.db.logger
                    ).collect()
                    ids.append(try #require(rows.first).decode(UUID.self))
                }
                return ids
            }
            try await served.waitForPush(of: ids[2])
            let digest: String = try await served.db.scalar("SELECT securepush.collapse_digest('coll', \(key))")
            #expect(digest.count == 32 && digest.allSatisfy(\.isHexDigit))
            let superseded: Int64 = try await served.db.scalar(
                "SELECT count(*)::bigint FROM securepush.delivery_log WHERE outcome = 'superseded' AND notification_id = ANY(\([ids[0], ids[1]]))")
            #expect(superseded == 2)
            // A later notification of another user pushed means the dispatcher had its chance at the first two.
            _ = try await served.register(user: "coll-other", token: "coll-other-phone")
            let later = try await served.db.enqueue(user: "coll-other", payload: "{}")
            try await served.waitForPush(of: later)
            let userPushes = served.pushes().filter { $0.token == "coll-phone" }
            #expect(userPushes.count == 1, "one push-visible notification")
            let push = try #require(userPushes.first)
            #expect(push.headers.contains { $0.name == "apns-collapse-id" && $0.value == digest })
            #expect(push.body.contains(#""secureCollapse":"\#(digest)""#))
            let outbox = try String(contentsOf: served.outbox, encoding: .utf8)
            #expect(!outbox.contains(key) && !outbox.contains("COLLAPSEKEY"), "the key never leaves the database")
        }
    }

    @Test("a muted category is stored and listable, not pushed; the listing returns the category")
    func mutedCategory() async throws {
        try await Self.withServed { served in
            let device = try await served.register(user: "mute", token: "mute-phone")
            let muted = try await served.request(.PUT, "/v1/categories/promotions", credential: device, body: #"{"muted":true}"#)
            #expect(muted.status == 200, "\(muted.body)")
            let promo: UUID = try await served.db.scalar(
                "SELECT securepush.enqueue(user_id => 'mute', payload => '{\"p\":1}'::jsonb, category => 'promotions')")
            let alert: UUID = try await served.db.scalar(
                "SELECT securepush.enqueue(user_id => 'mute', payload => '{\"a\":1}'::jsonb, category => 'security')")
            try await served.waitForPush(of: alert)
            #expect(served.pushes(of: promo).isEmpty, "a muted category is not pushed")
            let stored: Bool = try await served.db.scalar("SELECT payload IS NOT NULL FROM securepush.notifications WHERE id = \(promo)")
            #expect(stored)
            let list = try await served.request(.GET, "/v1/notifications", credential: device)
            let page = try JSONSerialization.jsonObject(with: Data(list.body.utf8)) as? [String: Any]
            let items = try #require(page?["notifications"] as? [[String: Any]])
            let categories = Dictionary(uniqueKeysWithValues: items.map { ($0["id"] as? String ?? "", $0["category"] as? String ?? "") })
            #expect(categories[promo.uuidString.lowercased()] == "promotions")
            #expect(categories[alert.uuidString.lowercased()] == "security")
            let read = try await served.request(.GET, "/v1/notifications/\(promo)", credential: device)
            #expect(read.status == 200 && read.body.contains(#""category":"promotions""#), "\(read.body)")
            let listed = try await served.request(.GET, "/v1/categories", credential: device)
            let body = try JSONSerialization.jsonObject(with: Data(listed.body.utf8)) as? [String: Any]
            let rows = try #require(body?["categories"] as? [[String: Any]])
            #expect(rows.map { $0["name"] as? String } == ["promotions", "security"])
            #expect(rows.map { $0["muted"] as? Bool } == [true, false])
            #expect(!served.pushes().contains { $0.body.contains("promotions") || $0.body.contains("security") }, "category names are never pushed")
            let bad = try await served.request(.PUT, "/v1/categories/no%20spaces", credential: device, body: #"{"muted":true}"#)
            #expect(bad.status == 400 && bad.body.contains("invalid_parameter"), "\(bad.body)")
        }
    }

    @Test("a token replaced with the device credential alone: the next push goes to the new token")
    func tokenReplaced() async throws {
        try await Self.withServed { served in
            // Address changes share registration's hourly budget: this user's registration and two changes here.
            try await served.db.execute("UPDATE securepush.settings SET value = '3' WHERE key = 'max_registrations_per_hour'")
            let device = try await served.register(user: "tok", token: "tok-old")
            let other = try await served.register(user: "tok-2", token: "tok-taken")
            let first = try await served.db.enqueue(user: "tok", payload: "{}")
            try await served.waitForPush(of: first)
            #expect(served.pushes(of: first).map(\.token) == ["tok-old"])
            let update = try await served.request(.PUT, "/v1/devices/current/token", credential: device, body: #"{"token":"tok-new"}"#)
            #expect(update.status == 204, "\(update.body)")
            let second = try await served.db.enqueue(user: "tok", payload: "{}")
            try await served.waitForPush(of: second)
            #expect(served.pushes(of: second).map(\.token) == ["tok-new"])
            // The same credential still works: its id and secret did not change.
            #expect(try await served.request(.GET, "/v1/notifications/\(second)", credential: device).status == 200)
            // Taking another device's token retires that device, as a registration would.
            let taken = try await served.request(.PUT, "/v1/devices/current/token", credential: device, body: #"{"token":"tok-taken"}"#)
            #expect(taken.status == 204, "\(taken.body)")
            #expect(try await served.request(.GET, "/v1/notifications", credential: other).status == 401)
            let wrongPlatform = try await served.request(
                .PUT, "/v1/devices/current/token", credential: device, body: #"{"platform":"apns","token":"abcd"}"#)
            #expect(wrongPlatform.status == 400 && wrongPlatform.body.contains("invalid_device"), "\(wrongPlatform.body)")
            #expect(try await served.request(.PUT, "/v1/devices/current/token", body: #"{"token":"x"}"#).status == 401)
            let third = try await served.request(.PUT, "/v1/devices/current/token", credential: device, body: #"{"token":"tok-third"}"#)
            #expect(third.status == 429 && !third.headers["retry-after"].isEmpty, "a third change within the hour: \(third.body)")
            let audited: Int64 = try await served.db.scalar(
                "SELECT count(*)::bigint FROM securepush.audit_log WHERE event = 'device_token_updated' AND user_id = 'tok'")
            #expect(audited == 2)
        }
    }

    @Test("CORS: an allowed origin gets preflight and response headers on the device routes, never credentials; others none")
    func cors() async throws {
        let origin = "http://127.0.0.1:8123"
        try await Self.withServed(["SECUREPUSH_CORS_ORIGINS": origin]) { served in
            let device = try await served.register(user: "cors", token: "cors-phone")
            let preflight = try await served.request(
                .OPTIONS, "/v1/devices/current/token",
                headers: [("Origin", origin), ("Access-Control-Request-Method", "PUT"), ("Access-Control-Request-Headers", "authorization")])
            #expect(preflight.status == 204)
            #expect(preflight.headers["access-control-allow-origin"] == [origin])
            #expect(preflight.headers["access-control-allow-methods"].first?.contains("PUT") == true)
            #expect(preflight.headers["access-control-allow-headers"].first?.contains("authorization") == true)
            #expect(preflight.headers["access-control-allow-credentials"].isEmpty)
            let list = try await served.request(.GET, "/v1/notifications", credential: device, headers: [("Origin", origin)])
            #expect(list.status == 200 && list.headers["access-control-allow-origin"] == [origin] && list.headers["vary"].contains("Origin"))
            let refused = try await served.request(.GET, "/v1/notifications", credential: "bad.credential", headers: [("Origin", origin)])
            #expect(refused.status == 401 && refused.headers["access-control-allow-origin"] == [origin], "errors carry it too")
            let stranger = try await served.request(.GET, "/v1/notifications", credential: device, headers: [("Origin", "http://evil.example")])
            #expect(stranger.headers["access-control-allow-origin"].isEmpty)
            let strangerPreflight = try await served.request(
                .OPTIONS, "/v1/notifications", headers: [("Origin", "http://evil.example"), ("Access-Control-Request-Method", "GET")])
            #expect(strangerPreflight.status != 204 && strangerPreflight.headers["access-control-allow-origin"].isEmpty)
            let status = try await served.request(.GET, "/status", headers: [("Origin", origin)])
            #expect(status.headers["access-control-allow-origin"].isEmpty, "operations routes are not cross-origin")
        }
    }
}
