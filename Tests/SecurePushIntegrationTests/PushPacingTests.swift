import Foundation
import Logging
import PostgresNIO
import SecurePushCore
import SecurePushDispatcher
import SecurePushProviders
import SecurePushStore
import SecurePushTestSupport
import Testing

/// `SECUREPUSH_MAX_PUSH_RATE`: the fleet's rate is shared among the live dispatchers, counted from their
/// heartbeat rows.
@Suite("Push pacing across the fleet")
struct PushPacingTests {
    @Test("live dispatchers: heard from recently and not stopped")
    func liveCount() async throws {
        try await TestDatabase.with { db in
            let registry = PostgresDispatcherRegistry(client: db.client, logger: db.logger)
            let identities = (0..<4).map { DispatcherIdentity(id: UUID(), host: "box", pid: Int32($0), role: "dispatcher", version: "test") }
            for identity in identities { try await registry.heartbeat(identity, sent: 0, failed: 0, circuits: []) }
            #expect(try await registry.liveDispatchers(within: .seconds(15)) == 4)
            try await registry.stopped(identities[0], sent: 0, failed: 0)
            try await db.execute("UPDATE securepush.dispatchers SET last_seen_at = now() - interval '20 seconds' WHERE id = \(identities[1].id)")
            #expect(try await registry.liveDispatchers(within: .seconds(15)) == 2)
        }
    }

    @Test("each process's heartbeat shares the fleet rate among the live dispatchers, and follows the fleet as it changes")
    func sharedThroughHeartbeats() async throws {
        try await TestDatabase.with { db in
            let registry = PostgresDispatcherRegistry(client: db.client, logger: db.logger)
            let pacers = [PushPacer(fleetRate: 900), PushPacer(fleetRate: 900), PushPacer(fleetRate: 900)]
            let identities = (0..<3).map { DispatcherIdentity(id: UUID(), host: "box", pid: Int32($0), role: "dispatcher", version: "test") }
            let tasks = zip(identities, pacers).map { identity, pacer in
                let service = HeartbeatService(
                    registry: registry, identity: identity, stats: DispatcherStats(), interval: .milliseconds(100), pacer: pacer,
                    logger: db.logger)
                return Task { try await service.run() }
            }
            defer { tasks.forEach { $0.cancel() } }
            try await db.eventually("three live dispatchers share 900/s") { pacers.allSatisfy { $0.rate == 300 } }
            // One process dies without recording its stop: once its row is stale the others take its share.
            tasks[2].cancel()
            _ = await tasks[2].result
            try await db.execute("UPDATE securepush.dispatchers SET last_seen_at = now() - interval '1 hour' WHERE id = \(identities[2].id)")
            try await db.eventually("two live dispatchers share 900/s") { pacers.prefix(2).allSatisfy { $0.rate == 450 } }
        }
    }

    @Test("a paced dispatcher sends everything, never faster than its rate")
    func pacedDispatcher() async throws {
        try await TestDatabase.with { db in
            try await db.insertDevice(user: "pace", token: "pace-1")
            var configuration = DispatcherConfiguration.testing
            configuration.maxPushRate = 40
            let harness = try DispatcherHarness(database: db, configuration: configuration)
            try await db.execute("INSERT INTO securepush.notifications (user_id, payload) SELECT 'pace', '{}'::jsonb FROM generate_series(1, 60)")
            try await db.eventually("60 pushes") { harness.pushes.count >= 60 }
            await harness.stop()
            try await db.expectQueueDrained(logged: 60)
            let format = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
            let times = harness.pushes.compactMap { try? format.parse($0.time) }.sorted()
            #expect(times.count == 60)
            // 40/s with a burst of 2: the 60 pushes span at least 58 / 40 s (a slow machine only adds to it).
            let span = (times.last ?? .distantPast).timeIntervalSince(times.first ?? .distantPast)
            #expect(span >= 58.0 / 40 - 0.01, "60 pushes in \(span) s")
        }
    }
}
