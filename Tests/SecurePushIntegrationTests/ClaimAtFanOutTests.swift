import Foundation
import PostgresNIO
import SecurePushTestSupport
import Testing

/// Since migration 035 the claim that fans a notification out takes the due deliveries of its own platforms at
/// once, up to what it may still claim; since 046 they are the items of one lease row (`securepush.claims`), not
/// a delivery row each: the happy path writes, per push, only its outcome row.
@Suite("Claims at the fan-out")
struct ClaimAtFanOutTests {
    struct Claim {
        var token: UUID
        var ids: [UUID]
        var attempts: [Int32]
        /// Rows the claim's transaction inserted into and updated in `securepush.deliveries`.
        var inserted: Int64
        var updated: Int64
        /// Lease rows it inserted into `securepush.claims`.
        var leased: Int64
    }

    /// One claim of `limit` for `platforms` (a lease of `leaseMilliseconds`), with the rows its transaction wrote:
    /// pg_stat_xact_user_tables before and after it in its transaction (the view also counts what earlier
    /// transactions of the connection have not reported yet, hence the difference).
    static func claim(_ db: TestDatabase, limit: Int, platforms: [String], leaseMilliseconds: Int64 = 60000) async throws -> Claim {
        let token = UUID()
        return try await db.client.withTransaction(logger: db.logger) { connection in
            let before = try await writes(on: connection, logger: db.logger)
            let rows = try await connection.query(
                """
                SELECT id, attempts FROM securepush.claim_deliveries(\(limit)::integer, \(platforms)::text[], \(leaseMilliseconds), \(token),
                                                                   gen_random_uuid(), false, 99)
                """,
                logger: db.logger
            ).collect()
            let claimed = try rows.map { try $0.decode((UUID, Int32).self) }
            let after = try await writes(on: connection, logger: db.logger)
            return Claim(
                token: token, ids: claimed.map(\.0), attempts: claimed.map(\.1), inserted: after.inserted - before.inserted,
                updated: after.updated - before.updated, leased: after.leased - before.leased)
        }
    }

    static func writes(on connection: PostgresConnection, logger: Logger) async throws -> (inserted: Int64, updated: Int64, leased: Int64) {
        let stats = try await connection.query(
            """
            SELECT sum(n_tup_ins) FILTER (WHERE relname = 'deliveries')::bigint, sum(n_tup_upd) FILTER (WHERE relname = 'deliveries')::bigint,
                   sum(n_tup_ins) FILTER (WHERE relname = 'claims')::bigint
            FROM pg_stat_xact_user_tables WHERE schemaname = 'securepush'
            """,
            logger: logger
        ).collect()
        let (inserted, updated, leased) = try #require(stats.first).decode((Int64, Int64, Int64).self)
        return (inserted, updated, leased)
    }

    /// Completes `ids` of the claim `token` with `outcomes` (no delays, the outcome word as info).
    static func complete(_ db: TestDatabase, token: UUID, ids: [UUID], outcomes: [String]) async throws -> Int64 {
        let zeros = [Int64](repeating: 0, count: ids.count)
        return try await db.scalar(
            """
            SELECT securepush.complete_deliveries(\(token), \(ids)::uuid[], \(outcomes)::text[], \(zeros)::bigint[], \(outcomes)::text[],
                                                  \(zeros)::bigint[])
            """)
    }

    @Test("a claim with room leases the deliveries it fans out: one lease row, no delivery row, attempt 1; its completion deletes it")
    func writtenClaimed() async throws {
        try await TestDatabase.with { db in
            try await db.insertDevice(user: "cf", token: "cf-1")
            for n in 1...3 { _ = try await db.enqueue(user: "cf", payload: #"{"n":\#(n)}"#) }
            let claim = try await Self.claim(db, limit: 10, platforms: ["simulated"])
            #expect(claim.ids.count == 3)
            #expect(claim.attempts == [1, 1, 1])
            #expect(claim.inserted == 0 && claim.updated == 0 && claim.leased == 1, "\(claim)")
            let items: [UUID] = try await db.client.query(
                "SELECT id FROM securepush.claimed_items WHERE token = \(claim.token) ORDER BY id", logger: db.logger
            ).collect().map { try $0.decode(UUID.self) }
            #expect(items == claim.ids.sorted { $0.uuidString < $1.uuidString } || Set(items) == Set(claim.ids))
            #expect(try await db.claimedCount() == 3)
            let queued: Int64 = try await db.scalar("SELECT count(*) FROM securepush.delivery_feed WHERE event = 'queued'")
            #expect(queued == 0, "a leased delivery writes no queued event of its own (036)")
            #expect(try await Self.complete(db, token: claim.token, ids: claim.ids, outcomes: ["sent", "sent", "sent"]) == 3)
            let again = try await Self.complete(db, token: claim.token, ids: claim.ids, outcomes: ["sent", "sent", "sent"])
            #expect(again == 0, "a second completion touches nothing")
            try await db.expectQueueDrained(logged: 3)
        }
    }

    /// The feed as `events_after` pages it, `size` events a page at most (pages never split a cursor's events).
    static func feed(_ db: TestDatabase, size: Int) async throws -> [(cursor: String, notification: UUID, event: String)] {
        var events: [(cursor: String, notification: UUID, event: String)] = []
        var after: String? = nil
        while true {
            let page = try await db.client.query(
                "SELECT cursor, notification_id, event FROM securepush.events_after(\(after), \(Int32(size)))", logger: db.logger
            ).collect().map { try $0.decode((String, UUID, String).self) }
            guard let last = page.last else { return events }
            #expect(page.count <= max(size, 2), "a page of \(size) held \(page.count)")
            events += page.map { (cursor: $0.0, notification: $0.1, event: $0.2) }
            after = last.0
        }
    }

    @Test("a delivery written claimed logs its queued event with its outcome, at one cursor no page splits; a retry writes it when the claim ends")
    func queuedWithOutcome() async throws {
        try await TestDatabase.with { db in
            try await db.insertDevice(user: "qo", token: "qo-1")
            var notifications: [UUID] = []
            for n in 1...3 { notifications.append(try await db.enqueue(user: "qo", payload: #"{"n":\#(n)}"#)) }
            let claim = try await Self.claim(db, limit: 10, platforms: ["simulated"])
            #expect(claim.ids.count == 3)
            let byNotification = Dictionary(
                uniqueKeysWithValues: try await db.client.query(
                    "SELECT notification_id, id, token FROM securepush.claimed_items", logger: db.logger
                ).collect().map { row -> (UUID, (UUID, UUID)) in
                    let (notification, delivery, token) = try row.decode((UUID, UUID, UUID).self)
                    return (notification, (delivery, token))
                })
            let (sent, retried, failed) = (notifications[0], notifications[1], notifications[2])
            let token = try #require(byNotification[sent]).1
            let ids = [sent, retried, failed].map { byNotification[$0]!.0 }
            let touched: Int64 = try await db.scalar(
                """
                SELECT securepush.complete_deliveries(\(token), \(ids)::uuid[], ARRAY['sent', 'retry', 'failed'], ARRAY[0, 0, 0]::bigint[],
                                                      ARRAY['m-1', 'HTTP 503', 'HTTP 400'], ARRAY[0, 0, 0]::bigint[])
                """)
            #expect(touched == 3)
            let logged: Int64 = try await db.scalar("SELECT count(*) FROM securepush.delivery_log WHERE queued_with_outcome")
            #expect(logged == 2, "the two outcomes carry their queued events")
            let events: Int64 = try await db.scalar("SELECT count(*) FROM securepush.delivery_events WHERE event = 'queued'")
            #expect(events == 1, "the retried delivery wrote its queued event when its claim ended")

            // The retried one is pushed by the next claim: its queued event is not written twice.
            let second = try await Self.claim(db, limit: 10, platforms: ["simulated"])
            #expect(second.ids == [byNotification[retried]!.0])
            let secondToken: UUID = try await db.scalar("SELECT lease_token FROM securepush.deliveries")
            let again: Int64 = try await db.scalar(
                """
                SELECT securepush.complete_deliveries(\(secondToken), \(second.ids)::uuid[], ARRAY['sent'], ARRAY[0]::bigint[],
                                                      ARRAY['m-2'], ARRAY[0]::bigint[])
                """)
            #expect(again == 1)

            let whole = try await Self.feed(db, size: 100)
            let words = { (notification: UUID) in whole.filter { $0.notification == notification }.map(\.event) }
            #expect(words(sent) == ["queued", "pushed"])
            #expect(words(failed) == ["queued", "undelivered"])
            #expect(words(retried) == ["queued", "pushed"])
            let cursors = { (notification: UUID) in Set(whole.filter { $0.notification == notification }.map(\.cursor)) }
            #expect(cursors(sent).count == 1 && cursors(failed).count == 1, "queued and its outcome share the history row's cursor")
            #expect(cursors(retried).count == 2, "a queued event written on its own has its own cursor")
            for size in 1...3 {
                let paged = try await Self.feed(db, size: size)
                #expect(paged.map(\.cursor) == whole.map(\.cursor) && paged.map(\.event) == whole.map(\.event), "pages of \(size)")
            }
        }
    }

    @Test("beyond the claim's room, and on other platforms, the fan-out leaves deliveries pending for the next claims")
    func roomAndPlatforms() async throws {
        try await TestDatabase.with { db in
            for d in 1...3 { try await db.insertDevice(user: "room", token: "room-\(d)") }
            try await db.insertDevice(user: "room", platform: "fcm", token: "room-fcm", options: #"{"project": "p"}"#)
            let first = try await db.enqueue(user: "room", payload: #"{"n":1}"#)
            let second = try await db.enqueue(user: "room", payload: #"{"n":2}"#)
            // Room for 4: two notifications fanned out (8 deliveries), 4 simulated ones claimed at once.
            let claim = try await Self.claim(db, limit: 4, platforms: ["simulated"])
            #expect(claim.ids.count == 4)
            #expect(claim.inserted == 4 && claim.updated == 0 && claim.leased == 1, "\(claim)")
            let pending: [String] = try await db.client.query(
                "SELECT platform FROM securepush.deliveries WHERE state = 'pending' ORDER BY platform", logger: db.logger
            ).collect().map { try $0.decode(String.self) }
            #expect(pending == ["fcm", "fcm", "simulated", "simulated"])
            let claimedFirst: Int64 = try await db.scalar(
                "SELECT count(*) FROM securepush.claimed_items WHERE notification_id = \(first)")
            #expect(claimedFirst == 3, "the older notification's deliveries are claimed first")
            // The next claim takes the pending rows (an update each) and has nothing left to fan out.
            let next = try await Self.claim(db, limit: 10, platforms: ["simulated"])
            #expect(next.ids.count == 2 && next.inserted == 0 && next.updated == 2, "\(next)")
            let left: Int64 = try await db.scalar(
                "SELECT count(*) FROM securepush.deliveries WHERE state = 'pending' AND notification_id IN (\(first), \(second))")
            #expect(left == 2, "the FCM ones wait for an FCM dispatcher")
        }
    }

    @Test("a claim whose room is taken by due rows still fans out one notification, and writes its deliveries pending")
    func fullClaimStillFansOut() async throws {
        try await TestDatabase.with { db in
            try await db.insertDevice(user: "full", token: "full-1")
            for n in 1...3 { _ = try await db.enqueue(user: "full", payload: #"{"n":\#(n)}"#) }
            try await db.execute("SELECT securepush.fan_out_queued(2)")
            let claim = try await Self.claim(db, limit: 2, platforms: ["simulated"])
            #expect(claim.ids.count == 2 && claim.updated == 2 && claim.inserted == 1 && claim.leased == 0, "\(claim)")
            let queue: Int64 = try await db.scalar("SELECT count(*) FROM securepush.fan_out_queue")
            #expect(queue == 0)
            let pending: Int64 = try await db.scalar("SELECT count(*) FROM securepush.deliveries WHERE state = 'pending'")
            #expect(pending == 1)
        }
    }

    @Test("a release turns lease items into pending rows without counting the attempt, in their place in line; the lease keeps the rest")
    func releaseLeaseItems() async throws {
        try await TestDatabase.with { db in
            try await db.insertDevice(user: "rl", token: "rl-1")
            for n in 1...3 { _ = try await db.enqueue(user: "rl", payload: #"{"n":\#(n)}"#) }
            let claim = try await Self.claim(db, limit: 10, platforms: ["simulated"])
            #expect(claim.ids.count == 3)
            let released: Int64 = try await db.scalar(
                "SELECT securepush.release_deliveries(\(claim.token), \(Array(claim.ids[1...]))::uuid[], 0)")
            #expect(released == 2)
            let rows = try await db.client.query(
                """
                SELECT d.id, d.state, d.attempts, d.run_at = c.claimed_at FROM securepush.deliveries d, securepush.claims c ORDER BY d.id
                """, logger: db.logger
            ).collect().map { try $0.decode((UUID, String, Int32, Bool).self) }
            #expect(Set(rows.map(\.0)) == Set(claim.ids[1...]))
            #expect(rows.allSatisfy { $0.1 == "pending" && $0.2 == 0 && $0.3 }, "\(rows)")
            let left: [UUID] = try await db.client.query("SELECT id FROM securepush.claimed_items", logger: db.logger)
                .collect().map { try $0.decode(UUID.self) }
            #expect(left == [claim.ids[0]], "the lease keeps the item still being pushed")
            #expect(try await Self.complete(db, token: claim.token, ids: [claim.ids[0]], outcomes: ["sent"]) == 1)
            #expect(try await db.scalar("SELECT count(*) FROM securepush.claims", as: Int64.self) == 0)
            // Released with a delay: due only after it.
            let next = try await Self.claim(db, limit: 10, platforms: ["simulated"])
            #expect(next.ids.count == 2 && next.updated == 2)
            #expect(try await db.scalar("SELECT securepush.release_deliveries(\(next.token), \(next.ids)::uuid[], 60000)", as: Int64.self) == 2)
            let due: Int64 = try await db.scalar("SELECT count(*) FROM securepush.deliveries WHERE run_at > now() + interval '50 seconds'")
            #expect(due == 2)
        }
    }

    @Test("a lease past its end is rescued: its items become pending rows with their attempt counted, and its old token completes nothing")
    func rescueLeases() async throws {
        try await TestDatabase.with { db in
            try await db.insertDevice(user: "rs", token: "rs-1")
            let notification = try await db.enqueue(user: "rs", payload: #"{"n":1}"#)
            let claim = try await Self.claim(db, limit: 10, platforms: ["simulated"], leaseMilliseconds: 1)
            #expect(claim.ids.count == 1)
            let status: [String] = try await db.client.query(
                "SELECT state FROM securepush.notification_status WHERE notification_id = \(notification)", logger: db.logger
            ).collect().map { try $0.decode(String.self) }
            #expect(status == ["claimed"], "the status view shows a leased delivery as claimed")
            try await db.awaitLeasesEnded()
            #expect(try await db.scalar("SELECT securepush.rescue_claims()", as: Int64.self) == 1)
            let row = try #require(
                try await db.client.query(
                    "SELECT id, state, attempts, last_error FROM securepush.deliveries", logger: db.logger
                ).collect().first
            ).decode((UUID, String, Int32, String?).self)
            #expect(row.0 == claim.ids[0] && row.1 == "pending" && row.2 == 1)
            #expect(row.3?.contains("lease expired") == true)
            #expect(try await Self.complete(db, token: claim.token, ids: claim.ids, outcomes: ["sent"]) == 0, "the old token is fenced off")
            #expect(try await db.scalar("SELECT count(*) FROM securepush.delivery_log", as: Int64.self) == 0)
            let events: Int64 = try await db.scalar("SELECT count(*) FROM securepush.delivery_events WHERE event = 'queued'")
            #expect(events == 1, "the rescued delivery writes its queued event once")
        }
    }

    @Test("a claim that finds no work rescues leases past their end, whatever build runs the maintenance")
    func idleClaimRescues() async throws {
        try await TestDatabase.with { db in
            try await db.insertDevice(user: "ir", token: "ir-1")
            let notification = try await db.enqueue(user: "ir", payload: #"{"n":1}"#)
            let first = try await Self.claim(db, limit: 10, platforms: ["simulated"], leaseMilliseconds: 1)
            #expect(first.ids.count == 1)
            try await db.awaitLeasesEnded()
            let idle = try await Self.claim(db, limit: 10, platforms: ["simulated"])
            #expect(idle.ids.isEmpty && idle.inserted == 1)
            let again = try await Self.claim(db, limit: 10, platforms: ["simulated"])
            #expect(again.ids == first.ids && again.attempts == [2])
            let cancelled = try await db.client.query(
                "SELECT in_flight FROM securepush.cancel(\(notification))", logger: db.logger
            ).collect().map { try $0.decode(Int32.self) }
            #expect(cancelled == [1], "cancel counts the claimed row in flight")
        }
    }

    @Test("a role granted SELECT on claimed_items alone (the monitor's grant, docs/operations.md) reads each lease's items in order")
    func monitorReadsLeases() async throws {
        try await TestDatabase.with { db in
            try await db.insertDevice(user: "mr", token: "mr-1")
            try await db.insertDevice(user: "mr", token: "mr-2")
            for n in 1...2 { _ = try await db.enqueue(user: "mr", payload: #"{"n":\#(n)}"#) }
            let claim = try await Self.claim(db, limit: 10, platforms: ["simulated"])
            #expect(claim.ids.count == 4)
            let role = "monitor_\(UUID().uuidString.prefix(8).lowercased())"
            try await db.execute("CREATE ROLE \(unescaped: role) NOLOGIN")
            try await db.execute("GRANT USAGE ON SCHEMA securepush TO \(unescaped: role)")
            try await db.execute("GRANT SELECT ON securepush.claimed_items TO \(unescaped: role)")
            let seen = try await db.client.withTransaction(logger: db.logger) { connection in
                _ = try await connection.query("SET LOCAL ROLE \(unescaped: role)", logger: db.logger)
                return try await connection.query(
                    "SELECT id FROM securepush.claimed_items WHERE token = \(claim.token)", logger: db.logger
                ).collect().map { try $0.decode(UUID.self) }
            }
            try await db.execute("DROP OWNED BY \(unescaped: role)")
            try await db.execute("DROP ROLE \(unescaped: role)")
            #expect(seen == claim.ids, "the monitor sees the lease's items in the claim's order")
        }
    }
}
