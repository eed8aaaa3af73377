import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import PostgresNIO
import SecurePushTestSupport
import Testing

/// Re-timing after a quiet-hours change is bounded (issue 47, item 4; migration 038): a round walks at most a
/// few thousand notifications, shared by the users it takes, and writes only deliveries whose time changes; a
/// user has an hourly number of changes.
@Suite("Quiet-hours re-timing, bounded")
struct QuietHoursRetimingTests {
    /// A window, in UTC, that holds back deliveries due in 90 minutes until `hours` hours from now; and that end as an instant.
    static func window(_ db: TestDatabase, until hours: Int) async throws -> (start: String, end: String, instant: String) {
        let start: String = try await db.scalar("SELECT to_char((now() AT TIME ZONE 'UTC') + interval '60 minutes', 'HH24:MI')")
        let end: String = try await db.scalar("SELECT to_char((now() AT TIME ZONE 'UTC') + \(hours) * interval '1 hour', 'HH24:MI')")
        let instant: String = try await db.scalar(
            "SELECT (date_trunc('minute', (now() AT TIME ZONE 'UTC') + \(hours) * interval '1 hour') AT TIME ZONE 'UTC')::text")
        return (start, end, instant)
    }

    static func round(_ db: TestDatabase, users: Int = 5, notifications: Int) async throws -> (moved: Int64, more: Bool) {
        let rows = try await db.client.query(
            "SELECT moved::bigint, more FROM securepush.reschedule_round(\(Int32(users)), \(Int32(notifications)))", logger: db.logger
        ).collect()
        return try rows[0].decode((Int64, Bool).self)
    }

    @Test("a large backlog is re-timed in bounded rounds that other users' requests share, and a repeated change writes nothing")
    func boundedRounds() async throws {
        try await TestDatabase.with { db in
            _ = try await db.insertDevice(user: "busy", token: "busy-phone")
            _ = try await db.insertDevice(user: "calm", token: "calm-phone")
            for user in ["busy", "calm"] {
                let count = user == "busy" ? 3_000 : 10
                try await db.execute(
                    """
                    INSERT INTO securepush.notifications (user_id, payload, deliver_at)
                    SELECT \(user), '{}', now() + interval '90 minutes' FROM generate_series(1, \(count))
                    """)
            }
            _ = try await db.fanOut()
            let window = try await Self.window(db, until: 3)
            for user in ["busy", "calm"] {
                try await db.execute("SELECT securepush.set_quiet_hours(\(user), 'UTC', \(window.start)::time, \(window.end)::time)")
            }
            // The first round shares 1,000 notifications between the two: calm is done, busy has walked 500.
            let first = try await Self.round(db, notifications: 1_000)
            #expect(first.more)
            #expect(first.moved == 510, "500 of busy's and calm's 10")
            let waiting: [String] = try await db.client.query(
                "SELECT user_id FROM securepush.reschedules ORDER BY user_id", logger: db.logger
            ).collect().map { try $0.decode(String.self) }
            #expect(waiting == ["busy"])
            var rounds = 1
            var moved = first.moved
            while true {
                let next = try await Self.round(db, notifications: 1_000)
                rounds += 1
                moved += next.moved
                #expect(next.moved <= 1_000, "a round writes no more than it walks")
                if !next.more { break }
                try #require(rounds < 10, "the re-timing ends")
            }
            #expect(moved == 3_010)
            let following: Int64 = try await db.scalar(
                """
                SELECT count(*)::bigint FROM securepush.deliveries d JOIN securepush.notifications n ON n.id = d.notification_id
                WHERE d.run_at = \(window.instant)::timestamptz AND d.state = 'scheduled'
                """)
            #expect(following == 3_010, "every waiting delivery follows the window")
            // The same window again: the walk finds nothing whose time changes.
            try await db.execute("SELECT securepush.set_quiet_hours('busy', 'UTC', \(window.start)::time, \(window.end)::time)")
            var again: Int64 = 0
            while true {
                let next = try await Self.round(db, notifications: 1_000)
                again += next.moved
                if !next.more { break }
            }
            #expect(again == 0)
        }
    }

    @Test("a user's quiet-hours changes past the hourly limit are refused (SPR01, the seconds left) and change nothing")
    func hourlyLimit() async throws {
        try await TestDatabase.with { db in
            try await db.execute("INSERT INTO securepush.settings (key, value) VALUES ('max_quiet_hours_changes_per_hour', '3')")
            try await db.execute("SELECT securepush.set_quiet_hours('lim', 'UTC', '22:00', '07:00')")
            try await db.execute("SELECT securepush.clear_quiet_hours('lim')")
            // Clearing what is not set is no change.
            try await db.execute("SELECT securepush.clear_quiet_hours('lim')")
            try await db.execute("SELECT securepush.set_quiet_hours('lim', 'UTC', '23:00', '06:00')")
            do {
                try await db.execute("SELECT securepush.set_quiet_hours('lim', 'UTC', '21:00', '05:00')")
                Issue.record("a fourth change in the hour was accepted")
            } catch let error as PSQLError {
                #expect(error.serverInfo?[.sqlState] == "SPR01")
                let seconds = Int(error.serverInfo?[.detail] ?? "") ?? 0
                #expect((3_500...3_600).contains(seconds), "\(seconds)")
            }
            let starts: String = try await db.scalar("SELECT starts::text FROM securepush.quiet_hours WHERE user_id = 'lim'")
            #expect(starts == "23:00:00")
            // Another user is not counted with this one.
            try await db.execute("SELECT securepush.set_quiet_hours('other', 'UTC', '22:00', '07:00')")
        }
    }

    @Test("over the API, a change past the limit is 429 too_many_requests with Retry-After")
    func hourlyLimitOverTheAPI() async throws {
        try await APIHarness.withDatabase { db, api, client in
            try await db.execute("INSERT INTO securepush.settings (key, value) VALUES ('max_quiet_hours_changes_per_hour', '1')")
            let device = try await registerDevice(client, api, user: "api-lim", token: "api-lim-phone")
            let body = ByteBuffer(string: #"{"time_zone":"UTC","start":"22:00","end":"07:00"}"#)
            let first = try await client.execute(uri: "/v1/quiet-hours", method: .put, headers: .bearer(device), body: body)
            #expect(first.status == .ok)
            let second = try await client.execute(uri: "/v1/quiet-hours", method: .delete, headers: .bearer(device))
            expectError(second, .tooManyRequests, "too_many_requests")
            #expect(Int(second.headers[.retryAfter] ?? "").map { $0 > 3_000 } == true, "\(second.headers)")
        }
    }
}
