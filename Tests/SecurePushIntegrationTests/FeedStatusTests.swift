import Foundation
import PostgresNIO
import SecurePushReports
import SecurePushStore
import SecurePushTestSupport
import Testing

/// `/status` reports how long an open transaction holds the outcome feed back and whose session it is, and
/// turns `degraded` past `SECUREPUSH_HEALTH_MAX_FEED_LAG` (issue 47, item 2: an idle producer transaction held
/// the feed and the webhook back for 30 s while the status said `ok`).
@Suite("The outcome feed's lag in /status")
struct FeedStatusTests {
    @Test("a producer's open transaction: the feed's held events, the holder's session, degraded past the limit, clear once it ends")
    func heldFeed() async throws {
        try await TestDatabase.with { db in
            _ = try await db.insertDevice(user: "fs", token: "fs-phone")
            var thresholds = StatusThresholds()
            thresholds.maxFeedLag = .seconds(1)
            let status = StatusStore(client: db.client, staleAfter: .seconds(30), thresholds: thresholds, logger: db.logger)
            let calm = try await status.report(pendingMigrations: [])
            #expect(calm.feed.heldSeconds == nil && calm.feed.heldBy == nil)
            try await CoordinationLockTests.withProducerConnection(db) { producer in
                try await producer.query("BEGIN", logger: db.logger)
                _ = try await producer.query("SELECT pg_current_xact_id()", logger: db.logger).collect()
                let role = try await producer.query("SELECT current_user::text", logger: db.logger).collect()[0].decode(String.self)
                // An event committed after the producer's transaction began: the feed holds it back.
                _ = try await db.enqueue(user: "fs", payload: #"{"n":1}"#)
                _ = try await db.fanOut()
                try await eventually("the feed held back past the limit", timeout: .seconds(20)) {
                    (try await status.report(pendingMigrations: []).feed.heldSeconds ?? 0) > 1
                }
                let held = try await status.report(pendingMigrations: [])
                #expect(held.feed.heldBy?.role == role, "\(String(describing: held.feed.heldBy))")
                #expect(held.health.status == "degraded")
                let reasons = held.health.reasons
                #expect(reasons.contains { $0.contains("outcome feed has held its events back") && $0.contains(role) }, "\(reasons)")
                try await producer.query("COMMIT", logger: db.logger)
            }
            let released = try await status.report(pendingMigrations: [])
            #expect(released.feed.heldSeconds == nil && released.feed.heldBy == nil)
            #expect(!released.health.reasons.contains { $0.contains("outcome feed") })
        }
    }
}
