import Foundation
import PostgresNIO
import SecurePushCore
import SecurePushDispatcher
import SecurePushProviders
import SecurePushStore
import SecurePushTestSupport
import Synchronization
import Testing

@Suite("Dispatcher")
struct DispatchTests {
    @Test("a rolled-back insert sends nothing; a committed one is pushed")
    func rolledBackInsert() async throws {
        try await TestDatabase.with { db in
            try await db.insertDevice(user: "rita", token: "rita-1")
            let harness = try DispatcherHarness(database: db)
            let rolledBackMarker = "ROLLEDBACK-\(UUID())"
            try await db.client.withConnection { connection in
                try await connection.query("BEGIN", logger: db.logger)
                try await connection.query(
                    "INSERT INTO securepush.notifications (user_id, payload) VALUES ('rita', jsonb_build_object('m', \(rolledBackMarker)::text))",
                    logger: db.logger)
                try await connection.query("ROLLBACK", logger: db.logger)
            }
            let committed = try await db.enqueue(user: "rita", payload: #"{"ok":true}"#)
            try await db.eventually("the committed notification is pushed") { harness.pushes.count >= 1 }
            await harness.stop()
            try await db.expectQueueDrained(logged: 1)
            #expect(harness.pushes.map(\.notificationID) == [committed.uuidString.lowercased()])
            let notifications: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.notifications")
            #expect(notifications == 1)
        }
    }

    @Test("fan-out: every device of the recipient gets an id-only push, nobody else's")
    func fanOutPushes() async throws {
        try await TestDatabase.with { db in
            for index in 1...4 { try await db.insertDevice(user: "sam", token: "sam-\(index)") }
            for index in 1...2 { try await db.insertDevice(user: "tom", token: "tom-\(index)") }
            let harness = try DispatcherHarness(database: db)
            let id = try await db.enqueue(user: "sam", payload: #"{"secret":"sam-only"}"#)
            try await db.eventually("4 pushes") { harness.pushes.count >= 4 }
            await harness.stop()
            try await db.expectQueueDrained(logged: 4)
            let pushes = harness.pushes
            #expect(pushes.count == 4)
            #expect(Set(pushes.map(\.token)) == ["sam-1", "sam-2", "sam-3", "sam-4"])
            #expect(pushes.allSatisfy { $0.notificationID == id.uuidString.lowercased() })
            let sent: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.delivery_log WHERE outcome = 'sent'")
            let queued: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.deliveries")
            #expect(sent == 4)
            #expect(queued == 0, "finished deliveries leave the hot queue table")
        }
    }

    @Test("every recorded push carries only the id: no byte of any payload appears in it")
    func idOnlyPushes() async throws {
        try await TestDatabase.with { db in
            try await db.insertDevice(user: "uma", token: "uma-1")
            try await db.insertDevice(user: "uma", token: "uma-2", options: #"{"push_style":"silent"}"#)
            var markers: [UUID: String] = [:]
            for _ in 0..<25 {
                let marker = "PAYLOAD-MARKER-\(UUID().uuidString)"
                let id = try await db.enqueue(user: "uma", payload: #"{"secret":"\#(marker)","title":"Payment received"}"#)
                markers[id] = marker
            }
            let harness = try DispatcherHarness(database: db)
            try await db.eventually("50 pushes") { harness.pushes.count >= 50 }
            await harness.stop()
            let encoder = JSONEncoder()
            for push in harness.pushes {
                let line = String(decoding: try encoder.encode(push), as: UTF8.self)
                for marker in markers.values {
                    #expect(!line.contains(marker))
                }
                #expect(!line.contains("Payment received"))
                let body = try JSONSerialization.jsonObject(with: Data(push.body.utf8)) as? [String: Any]
                #expect(body?["secureId"] as? String == push.notificationID)
                #expect(Set(body?.keys.map { $0 } ?? []) == ["aps", "secureId"])
                #expect(push.headers.contains(WireHeader("apns-collapse-id", push.notificationID)))
            }
            let alerts = harness.pushes.filter { $0.token == "uma-1" }
            #expect(alerts.count == 25)
            #expect(alerts.allSatisfy { $0.headers.contains(WireHeader("apns-push-type", "alert")) }, "the default is the alert form")
            let silent = harness.pushes.filter { $0.token == "uma-2" }
            #expect(silent.count == 25)
            #expect(silent.allSatisfy { $0.headers.contains(WireHeader("apns-push-type", "background")) }, "the device chose silent")
        }
    }

    @Test("expired notifications are not pushed")
    func expiry() async throws {
        try await TestDatabase.with { db in
            try await db.insertDevice(user: "vic", token: "vic-1")
            let id = try await db.enqueue(user: "vic", payload: "{}", ttl: "300 milliseconds")
            try await db.eventually("the notification expired") {
                try await db.scalar("SELECT expires_at <= now() FROM securepush.notifications WHERE id = \(id)")
            }
            let harness = try DispatcherHarness(database: db)
            try await db.eventually(
                "the delivery is logged as expired",
                count: "SELECT count(*)::bigint FROM securepush.delivery_log WHERE notification_id = \(id) AND outcome = 'expired'", is: 1)
            await harness.stop()
            #expect(harness.pushes.isEmpty)
        }
    }

    @Test("a transient failure is retried with backoff, then succeeds")
    func retryThenSuccess() async throws {
        try await TestDatabase.with { db in
            try await db.insertDevice(user: "wes", token: "wes-1")
            let harness = try DispatcherHarness(database: db) { push in
                push.attempt < 3 ? .retry(after: nil, reason: "ServiceUnavailable") : .sent(messageID: "msg-\(push.attempt)")
            }
            let id = try await db.enqueue(user: "wes", payload: "{}")
            try await db.eventually("sent on the third attempt") { harness.pushes.count == 1 }
            await harness.stop()
            let rows = try await db.client.query(
                "SELECT outcome, attempts, provider_message_id FROM securepush.delivery_log WHERE notification_id = \(id)",
                logger: db.logger
            ).collect()
            #expect(rows.count == 1)
            let (outcome, attempts, messageID) = try rows[0].decode((String, Int32, String?).self)
            #expect(outcome == "sent")
            #expect(attempts == 3)
            #expect(messageID == "msg-3")
        }
    }

    @Test("a provider's Retry-After is honoured as the earliest next attempt")
    func retryAfterHonoured() async throws {
        try await TestDatabase.with { db in
            try await db.insertDevice(user: "xia", token: "xia-1")
            let harness = try DispatcherHarness(database: db) { push in
                push.attempt == 1 ? .retry(after: .seconds(120), reason: "TooManyRequests") : .sent(messageID: nil)
            }
            let id = try await db.enqueue(user: "xia", payload: "{}")
            try await db.eventually(
                "the delivery is back to pending",
                count: "SELECT count(*)::bigint FROM securepush.deliveries WHERE notification_id = \(id) AND state = 'pending' AND attempts = 1",
                is: 1)
            await harness.stop()
            let delay: Double = try await db.scalar(
                "SELECT extract(epoch FROM run_at - now())::float8 FROM securepush.deliveries WHERE notification_id = \(id)")
            #expect(delay > 110 && delay <= 120)
            let lastError: String? = try await db.scalar("SELECT last_error FROM securepush.deliveries WHERE notification_id = \(id)")
            #expect(lastError == "TooManyRequests")
        }
    }

    @Test("retries exhausted: the delivery fails with its last error kept")
    func retryExhausted() async throws {
        try await TestDatabase.with { db in
            try await db.insertDevice(user: "yan", token: "yan-1")
            let attempts = Atomic<Int>(0)
            let harness = try DispatcherHarness(database: db) { _ in
                attempts.add(1, ordering: .relaxed)
                return .retry(after: nil, reason: "InternalServerError")
            }
            let id = try await db.enqueue(user: "yan", payload: "{}")
            try await db.eventually(
                "failed", count: "SELECT count(*)::bigint FROM securepush.delivery_log WHERE notification_id = \(id) AND outcome = 'failed'", is: 1)
            await harness.stop()
            let (count, lastError): (Int32, String) = try await db.client.query(
                "SELECT attempts, last_error FROM securepush.delivery_log WHERE notification_id = \(id)", logger: db.logger
            ).collect()[0].decode((Int32, String).self)
            #expect(count == 4)
            #expect(attempts.load(ordering: .relaxed) == 4)
            #expect(lastError.contains("InternalServerError"))
            #expect(harness.pushes.isEmpty)
        }
    }

    @Test("a permanent failure is not retried")
    func permanentFailure() async throws {
        try await TestDatabase.with { db in
            try await db.insertDevice(user: "zed", token: "zed-1")
            let attempts = Atomic<Int>(0)
            let harness = try DispatcherHarness(database: db) { _ in
                attempts.add(1, ordering: .relaxed)
                return .failed(reason: "BadTopic")
            }
            let id = try await db.enqueue(user: "zed", payload: "{}")
            try await db.eventually(
                "failed", count: "SELECT count(*)::bigint FROM securepush.delivery_log WHERE notification_id = \(id) AND outcome = 'failed'", is: 1)
            await harness.stop()
            try await db.expectQueueDrained(logged: 1)
            #expect(attempts.load(ordering: .relaxed) == 1)
        }
    }

    @Test("a dead token deactivates the device and cancels its pending deliveries")
    func deadToken() async throws {
        try await TestDatabase.with { db in
            let dead = try await db.insertDevice(user: "abe", token: "abe-dead")
            try await db.insertDevice(user: "abe", token: "abe-live")
            for index in 0..<20 { _ = try await db.enqueue(user: "abe", payload: #"{"n":\#(index)}"#) }
            // All 40 deliveries pending before the first push (a claim of 2 would fan out 2 at a time, and the
            // dead device, retired by then, would get none of the later ones).
            try await db.fanOut()
            var configuration = DispatcherConfiguration.testing
            configuration.batchSize = 2
            configuration.concurrency = 1
            configuration.lanes = 1
            let harness = try DispatcherHarness(database: db, configuration: configuration) { push in
                push.target.token == "abe-dead" ? .tokenInvalid(reason: "Unregistered") : .sent(messageID: nil)
            }
            try await db.eventually("all 40 deliveries finished", count: "SELECT count(*)::bigint FROM securepush.delivery_log", is: 40)
            await harness.stop()
            let active: Bool = try await db.scalar("SELECT active FROM securepush.devices WHERE id = \(dead)")
            #expect(!active)
            let rows = try await db.client.query(
                "SELECT outcome, count(*)::bigint FROM securepush.delivery_log WHERE device_id = \(dead) GROUP BY outcome",
                logger: db.logger
            ).collect()
            var outcomes: [String: Int64] = [:]
            for row in rows {
                let (outcome, count) = try row.decode((String, Int64).self)
                outcomes[outcome] = count
            }
            #expect((outcomes["token_invalid"] ?? 0) >= 1)
            #expect((outcomes["cancelled"] ?? 0) >= 10, "most pending deliveries were cancelled rather than attempted")
            #expect((outcomes["token_invalid"] ?? 0) + (outcomes["cancelled"] ?? 0) == 20)
            #expect(harness.pushes.filter { $0.token == "abe-dead" }.isEmpty)
            #expect(harness.pushes.filter { $0.token == "abe-live" }.count == 20)
        }
    }
}
