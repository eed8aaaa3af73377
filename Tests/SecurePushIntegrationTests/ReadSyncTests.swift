import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import PostgresNIO
import SecurePushProviders
import SecurePushTestSupport
import Testing

/// Read sync: reading a notification on one device sends `clear` pushes to the user's other devices that
/// received it, coalesced per device, and nothing when turned off.
@Suite("Read sync across a user's devices")
struct ReadSyncTests {
    static func clears(_ pushes: [SimulatedPush]) -> [SimulatedPush] {
        pushes.filter { $0.body.contains("secureClear") }
    }

    static func clearIDs(_ push: SimulatedPush) throws -> [String] {
        let body = try #require(try JSONSerialization.jsonObject(with: Data(push.body.utf8)) as? [String: Any])
        return try #require(body["secureClear"] as? [String])
    }

    static func waitForSent(_ db: TestDatabase, _ count: Int64) async throws {
        try await db.eventually(
            "\(count) pushes logged as sent", count: "SELECT count(*)::bigint FROM securepush.delivery_log WHERE outcome = 'sent'", is: count)
    }

    static func setWindow(_ db: TestDatabase, _ window: String, readSync: String = "on") async throws {
        try await db.execute("UPDATE securepush.settings SET value = \(window) WHERE key = 'read_sync_window'")
        try await db.execute("UPDATE securepush.settings SET value = \(readSync) WHERE key = 'read_sync'")
    }

    @Test("three devices, one read: the two others get one id-only background clear each, the reader none")
    func threeDevices() async throws {
        try await TestDatabase.with { db in
            try await Self.setWindow(db, "0 seconds")
            try await APIHarness.with(db) { api, client in
                let phone = try await registerDevice(client, api, user: "rae", token: "rae-phone")
                _ = try await registerDevice(client, api, user: "rae", token: "rae-tablet")
                _ = try await registerDevice(client, api, user: "rae", token: "rae-laptop")
                let dispatcher = try DispatcherHarness(database: db)
                let id = try await db.enqueue(user: "rae", payload: #"{"title":"SECRET-TITLE"}"#)
                try await db.eventually("three pushes") { dispatcher.pushes.count == 3 }
                // Clears go to the devices whose push is logged as sent: wait for the outcomes, not only the pushes.
                try await Self.waitForSent(db, 3)
                let read = try await client.execute(uri: "/v1/notifications/\(id)", method: .get, headers: .bearer(phone))
                #expect(read.status == .ok)
                try await db.eventually("two clears") { Self.clears(dispatcher.pushes).count == 2 }
                await dispatcher.stop()
                let clears = Self.clears(dispatcher.pushes)
                #expect(Set(clears.map(\.token)) == ["rae-tablet", "rae-laptop"])
                for clear in clears {
                    #expect(try Self.clearIDs(clear) == [id.uuidString.lowercased()])
                    #expect(!clear.body.contains("SECRET"), "id only")
                    #expect(clear.headers.contains { $0.name == "apns-push-type" && $0.value == "background" })
                    #expect(clear.headers.contains { $0.name == "apns-priority" && $0.value == "5" })
                }
                #expect(dispatcher.pushes.count == 5, "no clear for the reader, no second clear")
                let logged: Int64 = try await db.scalar(
                    "SELECT count(*)::bigint FROM securepush.delivery_log WHERE kind = 'clear' AND outcome = 'sent'")
                #expect(logged == 2)
                let accepted: Int64 = try await db.scalar("SELECT coalesce(sum(accepted), 0)::bigint FROM securepush.fetch_stats()")
                #expect(accepted == 3, "the fetch statistics count the notification's pushes, not the clears")
                let statusRows: Int64 = try await db.scalar(
                    "SELECT count(*)::bigint FROM securepush.notification_status WHERE notification_id = \(id)")
                #expect(statusRows == 3)
            }
        }
    }

    @Test("reads within the window coalesce into one clear per device carrying the newest ids first")
    func coalescing() async throws {
        try await TestDatabase.with { db in
            try await Self.setWindow(db, "1 hour")
            try await APIHarness.with(db) { api, client in
                let phone = try await registerDevice(client, api, user: "sol", token: "sol-phone")
                _ = try await registerDevice(client, api, user: "sol", token: "sol-tablet")
                let dispatcher = try DispatcherHarness(database: db)
                let first = try await db.enqueue(user: "sol", payload: #"{"n":1}"#)
                let second = try await db.enqueue(user: "sol", payload: #"{"n":2}"#)
                try await db.eventually("four pushes") { dispatcher.pushes.count == 4 }
                // Clears go to the devices whose push is logged as sent: wait for the outcomes, not only the pushes.
                try await Self.waitForSent(db, 4)
                for id in [first, second] {
                    #expect(try await client.execute(uri: "/v1/notifications/\(id)", method: .get, headers: .bearer(phone)).status == .ok)
                }
                // The hour-long window holds the clear: one pending row for the tablet, with both ids, newest first.
                let pending: [String] = try await db.scalar(
                    "SELECT array_agg(x::text ORDER BY o) FROM securepush.deliveries, unnest(clear_ids) WITH ORDINALITY u(x, o) WHERE kind = 'clear'")
                #expect(pending == [second, first].map { $0.uuidString.lowercased() })
                let rows: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.deliveries WHERE kind = 'clear'")
                #expect(rows == 1)
                try await db.execute("UPDATE securepush.deliveries SET run_at = now() WHERE kind = 'clear'")
                try await db.eventually("the clear") { Self.clears(dispatcher.pushes).count == 1 }
                await dispatcher.stop()
                let clear = try #require(Self.clears(dispatcher.pushes).first)
                #expect(clear.token == "sol-tablet")
                #expect(try Self.clearIDs(clear) == [second, first].map { $0.uuidString.lowercased() })
            }
        }
    }

    @Test("SECUREPUSH_READ_SYNC=off: a read schedules no clear")
    func off() async throws {
        try await TestDatabase.with { db in
            try await Self.setWindow(db, "0 seconds", readSync: "off")
            try await APIHarness.with(db) { api, client in
                let phone = try await registerDevice(client, api, user: "ted", token: "ted-phone")
                _ = try await registerDevice(client, api, user: "ted", token: "ted-tablet")
                let dispatcher = try DispatcherHarness(database: db)
                let id = try await db.enqueue(user: "ted", payload: "{}")
                try await db.eventually("two pushes") { dispatcher.pushes.count == 2 }
                // Clears go to the devices whose push is logged as sent: wait for the outcomes, not only the pushes.
                try await Self.waitForSent(db, 2)
                await dispatcher.stop()
                #expect(try await client.execute(uri: "/v1/notifications/\(id)", method: .get, headers: .bearer(phone)).status == .ok)
                // The trigger runs in the read's own statement: nothing was scheduled, now or later.
                let clears: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.deliveries WHERE kind = 'clear'")
                #expect(clears == 0)
            }
        }
    }
}
