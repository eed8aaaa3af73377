import Foundation
import PostgresNIO
import SecurePushCore
import SecurePushDispatcher
import SecurePushProviders
import SecurePushTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Crashes and outages")
struct CrashTests {
    @Test("a `securepush serve` process killed with SIGKILL mid-batch loses nothing; another process finishes its work")
    func killedProcessLosesNothing() async throws {
        try await TestDatabase.with { db in
            try await db.insertDevice(user: "kat", token: "kat-1")
            try await db.insertNumberedNotifications(1...200, user: "'kat'")
            let ids = Set(
                try await db.client.query("SELECT id FROM securepush.notifications", logger: db.logger).collect()
                    .map { try $0.decode(UUID.self).uuidString.lowercased() })
            let outbox = FileManager.default.temporaryDirectory.appendingPathComponent("securepush-kill-\(UUID()).jsonl")
            defer { try? FileManager.default.removeItem(at: outbox) }

            let process = Process()
            process.executableURL = try securepushExecutable()
            process.arguments = ["serve", "--role", "dispatcher"]
            process.environment = [
                "DATABASE_URL": db.url.urlString,
                "SECUREPUSH_SIMULATED_OUTBOX": outbox.path,
                "SECUREPUSH_SIMULATED_LATENCY": "100ms",
                "SECUREPUSH_CONCURRENCY": "4",
                "SECUREPUSH_BATCH_SIZE": "20",
                "SECUREPUSH_LANES": "1",
                "SECUREPUSH_LEASE": "2s",
                "SECUREPUSH_LOG_LEVEL": "error",
                "SECUREPUSH_HOST": "127.0.0.1",
                "SECUREPUSH_PORT": "0",  // its operations listener, on any free port
            ]
            try process.run()
            @Sendable func recorded() -> [String] {
                let text = (try? String(contentsOf: outbox, encoding: .utf8)) ?? ""
                return text.split(separator: "\n").compactMap { line in
                    (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["notification_id"] as? String
                }
            }
            // Killed while it holds a claim: each batch spends ~0.5 s sending (100 ms per push, 4 at a time),
            // against the moment between writing a batch's outcomes and claiming the next.
            try await db.eventually("the child process pushed some and holds a claim") {
                guard recorded().count >= 30 else { return false }
                let claimed = try await db.claimedCount()
                return claimed > 0
            }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let beforeKill = recorded()
            let claimed = try await db.claimedCount()
            #expect(claimed > 0, "the process died holding claims")
            #expect(beforeKill.count < 200)

            let harness = try DispatcherHarness(database: db)
            try await db.eventually(
                "all 200 delivered", timeout: .seconds(30), count: "SELECT count(*)::bigint FROM securepush.delivery_log WHERE outcome = 'sent'",
                is: 200)
            await harness.stop()
            let after = harness.pushes.map(\.notificationID)
            #expect(Set(beforeKill).union(after) == ids, "every notification was pushed")
            // Outcomes are written once per batch, when its last send ends: a crash repeats only pushes whose outcome
            // was not written yet, that is deliveries the dead process still held claimed (a batch of 20, or more
            // when a slow outcome write lets the lane claim on: its sends' slots are free once they end).
            let repeated = beforeKill.count + after.count - 200
            #expect(repeated <= Int(claimed), "\(repeated) pushes repeated, but the process died holding \(claimed) claims")
        }
    }

    @Test("every database connection killed mid-drain: the dispatcher reconnects and nothing is lost")
    func connectionsKilled() async throws {
        try await TestDatabase.with { db in
            try await db.insertSimulatedDevices(1...4, user: "'ned'", token: "'ned-' || g")
            try await db.insertNumberedNotifications(1...500, user: "'ned'")
            var configuration = DispatcherConfiguration.testing
            configuration.batchSize = 50
            let harness = try DispatcherHarness(database: db, configuration: configuration) { _ in
                try? await Task.sleep(for: .milliseconds(1))
                return .sent(messageID: nil)
            }
            try await db.eventually("some pushed") { harness.pushes.count >= 200 }
            let killed: Int64 = try await db.scalar(
                """
                SELECT count(pg_terminate_backend(pid))::bigint FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid()
                """
            )
            #expect(killed >= 2, "the pool's and the listener's connections were killed")
            try await db.eventually(
                "all 2,000 sent", timeout: .seconds(60), count: "SELECT count(*)::bigint FROM securepush.delivery_log WHERE outcome = 'sent'",
                is: 2000)
            await harness.stop()
            let distinct = Set(harness.pushes.map { "\($0.notificationID)/\($0.deviceID)" })
            #expect(distinct.count == 2000)
            let left: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.deliveries")
            #expect(left == 0)
        }
    }
}
