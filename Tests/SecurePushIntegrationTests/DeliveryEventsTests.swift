import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationEssentialsCompat
import NIOHTTP1
import PostgresNIO
import SecurePushCore
import SecurePushProviders
import SecurePushStore
import SecurePushTestSupport
import Testing

/// Outcome events (issue 36): a producer follows each notification's fate with `LISTEN securepush_events` and
/// `securepush.events_after`, against the real binary pushing to the simulated platform.
@Suite("Outcome events")
struct DeliveryEventsTests {
    struct Event: Equatable, CustomStringConvertible {
        var notification: UUID
        var device: UUID?
        var platform: String?
        var event: String
        var detail: String?
        var description: String { "\(event)(\(detail ?? "-"))" }
    }

    /// Reads everything after `cursor` as the producer role, returning the events and the last cursor.
    static func read(_ client: PostgresClient, after cursor: String?, _ logger: Logger) async throws -> ([Event], String?) {
        var events: [Event] = []
        var last = cursor
        let rows = try await client.query(
            "SELECT cursor, notification_id, device_id, platform, event, detail FROM securepush.events_after(\(cursor), 1000)", logger: logger)
        for try await (position, notification, device, platform, event, detail) in rows.decode((String, UUID, UUID?, String?, String, String?).self) {
            events.append(Event(notification: notification, device: device, platform: platform, event: event, detail: detail))
            last = position
        }
        return (events, last)
    }

    static func register(_ port: Int, user: String, token: String) async throws -> (id: UUID, secret: String) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/devices")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(try await HostileInputTests.userToken(user))")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: #"{"platform":"simulated","token":"\#(token)"}"#))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 16)
        #expect(response.status == .created)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])
        let id = try #require(UUID(uuidString: object["device_id"] as? String ?? ""))
        return (id, try #require(object["device_secret"] as? String))
    }

    @Test(
        "a producer listening on securepush_events sees queued, pushed and fetched, undelivered for a dead token and muted; NOTIFY carries only a cursor"
    )
    func producerFollowsOutcomes() async throws {
        try await TestDatabase.with { db in
            let outbox = FileManager.default.temporaryDirectory.appendingPathComponent("securepush-events-\(UUID()).jsonl")
            defer { try? FileManager.default.removeItem(at: outbox) }
            let environment = ["SECUREPUSH_PROVIDERS": "simulated", "SECUREPUSH_SIMULATED_OUTBOX": outbox.path]
            try await withServedAPI(db, role: "all", environment: environment) { port in
                try await eventually("the server answers", timeout: .seconds(30)) {
                    (try? await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/healthz"), timeout: .seconds(2)))?.status
                        == .ok
                }
                let phone = try await Self.register(port, user: "ann", token: "ann-phone")
                let dead = try await Self.register(port, user: "ann", token: "\(SimulatedProvider.invalidTokenPrefix)ann-tablet")
                try await db.execute("INSERT INTO securepush.category_mutes (user_id, category) VALUES ('ann', 'promotions')")
                try await ProducerRoleTests.asProducer(db) { producer in
                    try await withDeadline(.seconds(60)) {
                        try await producer.withConnection { listener in
                            try await listener.listen(on: "securepush_events") { notifications in
                                var wakeups = notifications.makeAsyncIterator()
                                let (history, start) = try await Self.read(producer, after: nil, db.logger)
                                #expect(history.isEmpty, "nothing happened yet: \(history)")
                                let id: UUID = try await producer.query(
                                    "INSERT INTO securepush.notifications (user_id, payload) VALUES ('ann', '{\"m\":\"EVENT-PAYLOAD\"}') RETURNING id",
                                    logger: db.logger
                                ).collect().first!.decode(UUID.self)
                                let muted: UUID = try await producer.query(
                                    "SELECT securepush.enqueue(user_id => 'ann', payload => '{}'::jsonb, category => 'promotions')", logger: db.logger
                                ).collect().first!.decode(UUID.self)
                                var seen: [Event] = []
                                var cursor = start
                                let wanted = 5  // queued ×2, pushed, undelivered, muted (then fetched)
                                do {
                                    while seen.count < wanted {
                                        guard let wakeup = try await wakeups.next() else { throw TestFailure("the LISTEN connection ended") }
                                        #expect(
                                            wakeup.payload.range(of: #"^[0-9]+:[0-9]+$"#, options: .regularExpression) != nil,
                                            "only a cursor: \(wakeup.payload)")
                                        let (events, last) = try await Self.read(producer, after: cursor, db.logger)
                                        seen += events
                                        cursor = last
                                    }
                                }
                                let ofID = seen.filter { $0.notification == id }
                                #expect(
                                    ofID.filter { $0.event == "queued" }.compactMap(\.device).sorted { $0.uuidString < $1.uuidString }
                                        == [phone.id, dead.id].sorted { $0.uuidString < $1.uuidString })
                                #expect(
                                    ofID.contains { $0.event == "pushed" && $0.device == phone.id && $0.platform == "simulated" && $0.detail != nil })
                                #expect(ofID.contains { $0.event == "undelivered" && $0.device == dead.id && $0.detail == "token_invalid" })
                                #expect(
                                    seen.contains { $0.notification == muted && $0.event == "muted" && $0.detail == "promotions" && $0.device == nil }
                                )
                                #expect(!seen.contains { $0.notification == muted && $0.event != "muted" }, "a muted notification is never queued")
                                let queuedFirst = try #require(ofID.firstIndex { $0.event == "queued" && $0.device == phone.id })
                                let pushed = try #require(ofID.firstIndex { $0.event == "pushed" })
                                #expect(queuedFirst < pushed, "in order per notification")

                                // The device fetches: 'fetched', once.
                                var fetch = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/notifications/\(id)")
                                fetch.headers.add(name: "Authorization", value: "Bearer \(phone.id.uuidString.lowercased()).\(phone.secret)")
                                let answer = try await HTTPClient.shared.execute(fetch, timeout: .seconds(10))
                                #expect(answer.status == .ok)
                                do {
                                    while !seen.contains(where: { $0.event == "fetched" }) {
                                        guard try await wakeups.next() != nil else { throw TestFailure("the LISTEN connection ended") }
                                        let (events, last) = try await Self.read(producer, after: cursor, db.logger)
                                        seen += events
                                        cursor = last
                                    }
                                }
                                #expect(
                                    seen.filter { $0.event == "fetched" } == [
                                        Event(notification: id, device: phone.id, platform: "simulated", event: "fetched")
                                    ])
                                let everything = try await Self.read(producer, after: nil, db.logger).0
                                #expect(everything == seen, "reading again from the start gives the same events in the same order")
                                let stored: String = try await db.scalar(
                                    "SELECT coalesce(string_agg(e::text, ' '), '') FROM securepush.delivery_events e")
                                #expect(
                                    !stored.contains("EVENT-PAYLOAD") && !stored.contains("ann-phone") && !stored.contains("ann"),
                                    "no payload, token or user")
                            }
                        }
                    }
                }
            }
        }
    }

    @Test("a cursor never skips an event that commits after a later one: events_after waits for the older transaction")
    func cursorWaitsForOlderTransactions() async throws {
        try await TestDatabase.with { db in
            _ = try await db.insertDevice(user: "bo", token: "bo-1")
            let (initial, start) = try await Self.read(db.client, after: nil, db.logger)
            #expect(initial.isEmpty)
            try await db.client.withConnection { slow in
                try await slow.query("BEGIN", logger: db.logger)
                // The slow transaction takes its xid (and an event position) first, and commits last.
                try await slow.query("INSERT INTO securepush.notifications (user_id, payload) VALUES ('bo', '{}')", logger: db.logger)
                let fast = try await db.enqueue(user: "bo", payload: "{}")
                let (whileOpen, _) = try await Self.read(db.client, after: start, db.logger)
                #expect(whileOpen.isEmpty, "held back while an older transaction is open: \(whileOpen)")
                try await slow.query("COMMIT", logger: db.logger)
                let (afterCommit, _) = try await Self.read(db.client, after: start, db.logger)
                #expect(afterCommit.count == 2, "\(afterCommit)")
                #expect(afterCommit.last?.notification == fast)
            }
            await #expect(throws: PSQLError.self) {
                _ = try await Self.read(db.client, after: "1; DROP TABLE x", db.logger)
            }
        }
    }

    @Test("events follow the history's retention: pruning deletes those older than it, oldest first, and keeps the rest")
    func eventsArePruned() async throws {
        try await TestDatabase.with { db in
            _ = try await db.insertDevice(user: "cy", token: "cy-1")
            _ = try await db.enqueue(user: "cy", payload: "{}")
            try await db.execute(
                """
                INSERT INTO securepush.delivery_events (at, notification_id, event)
                SELECT now() - interval '2 hours', gen_random_uuid(), 'muted' FROM generate_series(1, 30)
                """)
            let maintenance = PostgresQueueMaintenance(client: db.client, logger: db.logger)
            _ = try await maintenance.prune(retention: .seconds(3600), batchSize: 1000)
            let old: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.delivery_events WHERE at < now() - interval '1 hour'")
            let recent: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.delivery_events WHERE at >= now() - interval '1 hour'")
            #expect(old == 0)
            #expect(recent == 1, "the queued event stays")
        }
    }
}
