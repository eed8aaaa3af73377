import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationEssentialsCompat
import NIOHTTP1
import PostgresNIO
import SecurePushCore
import SecurePushPostgres
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
                                    "SELECT coalesce(string_agg(e::text, ' '), '') FROM securepush.delivery_feed e")
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
            _ = try await db.enqueue(user: "bo", payload: "{}")
            try await db.client.withConnection { slow in
                try await slow.query("BEGIN", logger: db.logger)
                // The slow transaction (a dispatcher's fan-out) takes its xid (and an event position) first, and
                // commits last; a second dispatcher fans out a later notification meanwhile.
                let slowTook = try await slow.query("SELECT securepush.fan_out_queued(10)", logger: db.logger).collect()
                #expect(try slowTook.first?.decode(Int32.self) == 1)
                let fast = try await db.enqueue(user: "bo", payload: "{}")
                let fastTook: Int32 = try await db.scalar("SELECT securepush.fan_out_queued(10)")
                #expect(fastTook == 1, "the notification the slow transaction holds is skipped")
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

    @Test(
        "one log (032): an outcome is written once, as its history row (with its queued event since 036), and a fetch as its fetches row; a feed that spans the upgrade shows every event once, in order"
    )
    func oneLogAcrossTheUpgrade() async throws {
        let all = try Migration.bundled()
        try await TestDatabase.withEmpty { db in
            _ = try await Migrator.securePush(all.filter { $0.version <= 31 }).migrate(client: db.client, logger: db.logger)
            let device = try await db.insertDevice(user: "di", token: "di-1")
            let queue = PostgresDeliveryQueue(client: db.client, logger: db.logger)
            /// Enqueues, pushes (accepted) and reads one notification as the dispatcher and the API do.
            @Sendable func deliverAndRead() async throws -> UUID {
                let id = try await db.enqueue(user: "di", payload: "{}")
                let batch = try await queue.claim(limit: 10, platforms: [.simulated], lease: .seconds(30), worker: UUID())
                #expect(batch.deliveries.map(\.push.notificationID.uuid) == [id])
                let done = try await queue.complete(
                    batch.deliveries.map { DeliveryCompletion(deliveryID: $0.id, outcome: .sent(messageID: "m-\(id)")) }, leaseToken: batch.leaseToken
                )
                #expect(done == 1)
                let fetched: Int64 = try await db.scalar(
                    "SELECT count(*)::bigint FROM securepush.fetch_for_device('di', \(device), ARRAY[\(id)]::uuid[]) WHERE live")
                #expect(fetched == 1)
                return id
            }
            let old = try await deliverAndRead()
            _ = try await Migrator.securePush(all).migrate(client: db.client, logger: db.logger)
            let new = try await deliverAndRead()

            let (events, _) = try await Self.read(db.client, after: nil, db.logger)
            let expected = [old, new].flatMap { id in
                [
                    Event(notification: id, device: device, platform: "simulated", event: "queued"),
                    Event(notification: id, device: device, platform: "simulated", event: "pushed", detail: "m-\(id)"),
                    Event(notification: id, device: device, platform: "simulated", event: "fetched"),
                ]
            }
            #expect(events == expected, "\(events)")
            // Since 032 the push and the fetch wrote no event row of their own; since 036 a delivery written claimed
            // by its fan-out writes no queued row either: its history row carries it.
            let rows: Int64 = try await db.scalar("SELECT count(*) FROM securepush.delivery_events WHERE notification_id = \(new)")
            #expect(rows == 0)
            let carried: Bool = try await db.scalar("SELECT queued_with_outcome FROM securepush.delivery_log WHERE notification_id = \(new)")
            #expect(carried)
        }
    }

    @Test("the feed is read in its index order from each home: a page of events_after sorts nothing, whatever the history holds")
    func feedReadsInIndexOrder() async throws {
        try await TestDatabase.with { db in
            // events_after's and events_head's statements on the view. With sorting priced out, a Sort left in the plan
            // means a home cannot be read in (xid, position) order: a filter inside one branch of the view's UNION ALL
            // did that to the history, and each page then sorted all of it (35 ms for 50,000 rows instead of 0.4 ms).
            for query in [
                """
                SELECT e.xid::text || ':' || e.position, e.event FROM securepush.delivery_feed e
                WHERE (e.xid, e.position) > ('0'::xid8, 0) AND e.xid < pg_snapshot_xmin(pg_current_snapshot())
                ORDER BY e.xid, e.position LIMIT 1000
                """,
                """
                SELECT e.xid::text || ':' || e.position FROM securepush.delivery_feed e
                WHERE e.xid < pg_snapshot_xmin(pg_current_snapshot()) ORDER BY e.xid DESC, e.position DESC LIMIT 1
                """,
            ] {
                let plan: String = try await db.client.withConnection { connection in
                    try await connection.query("SET enable_sort = off", logger: db.logger)
                    let rows = try await connection.query(PostgresQuery(unsafeSQL: "EXPLAIN (COSTS OFF) " + query), logger: db.logger).collect()
                    return try rows.map { try $0.decode(String.self) }.joined(separator: "\n")
                }
                // A Sort node's line (not the Merge Append's "Sort Key:").
                let sorts = plan.split(separator: "\n").filter {
                    $0.range(of: #"^\s*(->\s+)?(Incremental )?Sort$"#, options: .regularExpression) != nil
                }
                #expect(sorts.isEmpty, "\(plan)")
                for home in ["delivery_events", "delivery_log", "fetches"] { #expect(plan.contains("on \(home)"), "\(plan)") }
            }
        }
    }

    @Test("events follow the history's retention: pruning deletes those older than it, oldest first, and keeps the rest")
    func eventsArePruned() async throws {
        try await TestDatabase.with { db in
            _ = try await db.insertDevice(user: "cy", token: "cy-1")
            _ = try await db.enqueue(user: "cy", payload: "{}")
            try await db.fanOut()
            // Old events of both homes: marks (delivery_events) and outcomes (their history rows, delivery_log).
            try await db.execute(
                """
                INSERT INTO securepush.delivery_events (at, notification_id, event)
                SELECT now() - interval '2 hours', gen_random_uuid(), 'muted' FROM generate_series(1, 30)
                """)
            try await db.execute(
                """
                INSERT INTO securepush.delivery_log (id, notification_id, device_id, platform, outcome, attempts, created_at, finished_at, kind)
                SELECT gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), 'simulated', 'sent', 1,
                       now() - interval '3 hours', now() - interval '2 hours', 'notify'
                FROM generate_series(1, 20)
                """)
            let before: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.delivery_feed WHERE event = 'pushed'")
            #expect(before == 20, "an outcome is in the feed once, from its history row")
            let maintenance = PostgresQueueMaintenance(client: db.client, logger: db.logger)
            _ = try await maintenance.prune(retention: .seconds(3600), batchSize: 1000)
            let old: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.delivery_feed WHERE at < now() - interval '1 hour'")
            let recent: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.delivery_feed WHERE at >= now() - interval '1 hour'")
            #expect(old == 0)
            #expect(recent == 1, "the queued event stays")
        }
    }
}
