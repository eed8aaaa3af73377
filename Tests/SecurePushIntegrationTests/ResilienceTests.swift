import Foundation
import NIOConcurrencyHelpers
import PostgresNIO
import SecurePushCore
import SecurePushDispatcher
import SecurePushProviders
import SecurePushServer
import SecurePushStore
import SecurePushTestSupport
import Testing

@Suite("Dispatcher resilience")
struct ResilienceTests {
    @Test("a dispatcher that dies holding a claimed batch loses nothing: the lease expires and another sends it")
    func crashedDispatcherLeaseExpires() async throws {
        try await TestDatabase.with { db in
            try await db.insertDevice(user: "cam", token: "cam-1")
            var ids: Set<String> = []
            for index in 0..<30 { ids.insert(try await db.enqueue(user: "cam", payload: #"{"n":\#(index)}"#).uuidString.lowercased()) }
            // The "crashed" process: claims a batch with a 1 s lease, then never writes anything again.
            let crashed = PostgresDeliveryQueue(client: db.client, logger: db.logger)
            let batch = try await crashed.claim(limit: 20, platforms: [.simulated], lease: .seconds(1), worker: UUID())
            #expect(batch.deliveries.count == 20)

            let harness = try DispatcherHarness(database: db)
            try await db.eventually("all 30 pushed after the lease expired") { harness.pushes.count >= 30 }
            await harness.stop()
            try await db.expectQueueDrained(logged: 30)
            #expect(harness.pushes.count == 30)
            #expect(Set(harness.pushes.map(\.notificationID)) == ids)

            // The dead process's late completion must not count: its lease token is no longer on the rows.
            let applied = try await crashed.complete(
                batch.deliveries.map { DeliveryCompletion(deliveryID: $0.id, outcome: .failed(error: "late")) },
                leaseToken: batch.leaseToken
            )
            #expect(applied == 0)
            let failed: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.delivery_log WHERE outcome <> 'sent'")
            #expect(failed == 0)
        }
    }

    @Test("three dispatchers share 5,000 deliveries and none is sent twice")
    func threeDispatchersShareWork() async throws {
        try await TestDatabase.with { db in
            try await db.insertSimulatedDevices(0...99, user: "'fleet-' || (g % 50)", token: "'fleet-token-' || g")
            var configuration = DispatcherConfiguration.testing
            configuration.batchSize = 50
            let harnesses = try (0..<3).map { _ in try DispatcherHarness(database: db, configuration: configuration) }
            try await db.insertNumberedNotifications(1...2500, user: "'fleet-' || (g % 50)")
            try await db.eventually("5,000 pushes", timeout: .seconds(60)) {
                harnesses.reduce(0) { $0 + $1.pushes.count } >= 5000
            }
            for harness in harnesses { await harness.stop() }
            try await db.expectQueueDrained(logged: 5000)
            let all = harnesses.flatMap(\.pushes)
            #expect(all.count == 5000)
            #expect(Set(all.map { "\($0.notificationID)/\($0.deviceID)" }).count == 5000)
            let counts = harnesses.map(\.pushes.count)
            #expect(counts.filter { $0 > 0 }.count >= 2, "work is shared: \(counts)")
            let sent: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.delivery_log WHERE outcome = 'sent'")
            #expect(sent == 5000)
            let heartbeats: Int64 = try await db.scalar(
                "SELECT count(*)::bigint FROM securepush.dispatchers WHERE stopped_at IS NOT NULL AND sent > 0")
            #expect(heartbeats >= 2)
        }
    }

    @Test("the LISTEN connection killed with pg_terminate_backend reconnects and nothing is missed")
    func listenerReconnects() async throws {
        try await TestDatabase.with { db in
            try await db.insertDevice(user: "dan", token: "dan-1")
            var configuration = DispatcherConfiguration.testing
            configuration.pollInterval = .seconds(120)  // only NOTIFY (or a reconnect) can wake the lanes quickly
            let harness = try DispatcherHarness(database: db, configuration: configuration)
            let stats = harness.assembly.stats
            try await db.eventually("listening") { stats.listenerConnectionCount >= 1 }
            _ = try await db.enqueue(user: "dan", payload: "{}")
            try await db.eventually("first push via NOTIFY", timeout: .seconds(10)) { harness.pushes.count == 1 }

            let terminated: Int64 = try await db.scalar(
                """
                SELECT count(pg_terminate_backend(pid))::bigint FROM pg_stat_activity
                WHERE datname = current_database() AND query ILIKE 'LISTEN%' AND pid <> pg_backend_pid()
                """
            )
            #expect(terminated == 1)
            // Enqueued while the listener is down or reconnecting: caught by the poll right after reconnecting.
            _ = try await db.enqueue(user: "dan", payload: "{}")
            try await db.eventually("reconnected", timeout: .seconds(10)) { stats.listenerConnectionCount >= 2 }
            try await db.eventually("second push", timeout: .seconds(10)) { harness.pushes.count == 2 }
            _ = try await db.enqueue(user: "dan", payload: "{}")
            try await db.eventually("third push via NOTIFY on the new connection", timeout: .seconds(10)) { harness.pushes.count == 3 }
            await harness.stop()
        }
    }

    @Test("graceful shutdown lets the in-flight send finish and releases unstarted claims")
    func gracefulShutdownReleasesClaims() async throws {
        try await TestDatabase.with { db in
            try await db.insertDevice(user: "eve", token: "eve-1")
            for index in 0..<10 { _ = try await db.enqueue(user: "eve", payload: #"{"n":\#(index)}"#) }
            let (started, startedContinuation) = AsyncStream<Void>.makeStream()
            let (gate, gateContinuation) = AsyncStream<Void>.makeStream()
            let gateOpened = NIOLockedValueBox(false)
            var configuration = DispatcherConfiguration.testing
            configuration.concurrency = 1
            configuration.batchSize = 10
            configuration.lanes = 1
            let harness = try DispatcherHarness(database: db, configuration: configuration) { _ in
                startedContinuation.yield()
                if !gateOpened.withLockedValue({ $0 }) {
                    for await _ in gate { break }
                }
                return .sent(messageID: nil)
            }
            for await _ in started { break }
            let claimed = try await db.claimedCount()
            #expect(claimed == 10)

            let stopping = Task { await harness.stop() }
            try await db.eventually("shutdown began") { harness.assembly.dispatcher.stopRequested }
            gateOpened.withLockedValue { $0 = true }
            gateContinuation.yield()
            await stopping.value

            #expect(harness.pushes.count == 1)
            let rows = try await db.client.query(
                "SELECT state, attempts, lease_token IS NULL FROM securepush.deliveries", logger: db.logger
            ).collect()
            #expect(rows.count == 9)
            for row in rows {
                let (state, attempts, unleased) = try row.decode((String, Int32, Bool).self)
                #expect(state == "pending")
                #expect(attempts == 0, "a released claim does not count as an attempt")
                #expect(unleased)
            }
        }
    }
}

@Suite("Dead tokens and re-registration")
struct ReRegistrationRaceTests {
    @Test("a token-invalid answer for a push attempted before the device re-registered does not deactivate it")
    func reRegisteredAfterAttempt() async throws {
        try await TestDatabase.with { db in
            let device = try await db.insertDevice(user: "ray", token: "ray-phone")
            _ = try await db.enqueue(user: "ray", payload: "{}")
            _ = try await db.enqueue(user: "ray", payload: "{}")
            try await db.fanOut()  // both deliveries pending (a claim of 1 fans out one notification)
            let queue = PostgresDeliveryQueue(client: db.client, logger: db.logger)
            let batch = try await queue.claim(limit: 1, platforms: [.simulated], lease: .seconds(30), worker: UUID())
            #expect(batch.deliveries.count == 1)
            // The app re-registers the same token (rotating its secret) while the push is in flight.
            try await db.eventually("the clock moved past the claim") {
                try await db.scalar("SELECT clock_timestamp() > claimed_at FROM securepush.deliveries WHERE id = \(batch.deliveries[0].id)")
            }
            try await db.execute("SELECT device_secret FROM securepush.register_device('ray', 'simulated', 'ray-phone', '{}')")
            let applied = try await queue.complete(
                [DeliveryCompletion(deliveryID: batch.deliveries[0].id, outcome: .tokenInvalid(error: "APNs 410 Unregistered"))],
                leaseToken: batch.leaseToken
            )
            #expect(applied == 1)
            let active: Bool = try await db.scalar("SELECT active FROM securepush.devices WHERE id = \(device)")
            #expect(active, "the re-registered device stays active")
            let pending: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.deliveries WHERE state = 'pending'")
            #expect(pending == 1, "its other delivery is not cancelled")

            // Without a re-registration, the same answer deactivates it and cancels what is pending.
            let second = try await queue.claim(limit: 1, platforms: [.simulated], lease: .seconds(30), worker: UUID())
            _ = try await queue.complete(
                [DeliveryCompletion(deliveryID: second.deliveries[0].id, outcome: .tokenInvalid(error: "APNs 410 Unregistered"))],
                leaseToken: second.leaseToken
            )
            let stillActive: Bool = try await db.scalar("SELECT active FROM securepush.devices WHERE id = \(device)")
            #expect(!stillActive)
        }
    }
}
