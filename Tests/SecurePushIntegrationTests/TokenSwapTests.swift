import Foundation
import PostgresNIO
import SecurePushTestSupport
import Testing

/// Two devices that swap push addresses at once (issue 47, item 5): both changes end, one after the other,
/// instead of one failing on a deadlock (3 of 10 concurrent swaps answered 503 while a change locked its own
/// device row before the user's and the token's locks).
@Suite("Push address swaps")
struct TokenSwapTests {
    @Test("two devices swapping addresses at once wait for each other, of one user or of two, and never deadlock")
    func swapsDoNotDeadlock() async throws {
        for users in [["swap"], ["swap-a", "swap-b"]] {
            try await TestDatabase.with { db in
                let first = try await db.insertDevice(user: users[0], token: "\(users[0])-first")
                let second = try await db.insertDevice(user: users.last!, token: "\(users.last!)-second")
                // A third session holds the users' locks, so that both changes reach the point where the old order
                // held a device row while it waited; then lets them go at once.
                try await db.client.withConnection { blocker in
                    _ = try await blocker.query("BEGIN", logger: db.logger)
                    for user in Set(users) {
                        _ = try await blocker.query("SELECT securepush.lock_slot('devices', \(user))", logger: db.logger).collect()
                    }
                    async let one: Int = Self.change(db, device: first, to: "\(users.last!)-second")
                    async let two: Int = Self.change(db, device: second, to: "\(users[0])-first")
                    try await db.eventually(
                        "both changes wait",
                        count: "SELECT count(*)::bigint FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%update_device_token%'",
                        is: 2)
                    _ = try await blocker.query("COMMIT", logger: db.logger)
                    // Whichever ran first moved the other's address to itself and retired the other, whose own
                    // change then finds its device gone: one row in all, and no error.
                    let rows = try await one + two
                    #expect(rows == 1, "\(users)")
                }
                let active: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.devices WHERE active")
                #expect(active == 1)
            }
        }
    }

    static func change(_ db: TestDatabase, device: UUID, to token: String) async throws -> Int {
        try await db.client.query("SELECT * FROM securepush.update_device_token(\(device), \(token))", logger: db.logger).collect().count
    }
}
