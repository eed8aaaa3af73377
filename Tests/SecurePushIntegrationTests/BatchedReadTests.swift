import Foundation
import PostgresNIO
import SecurePushTestSupport
import Testing

@testable import SecurePushStore

@Suite("Batched reads")
struct BatchedReadTests {
    /// A device whose secret is `secret` (stored as its digest, as registration stores it).
    static func device(_ db: TestDatabase, user: String, token: String, secret: [UInt8]) async throws -> UUID {
        let id = try await db.insertDevice(user: user, token: token)
        try await db.execute("UPDATE securepush.devices SET secret_hash = sha256(\(ByteBuffer(bytes: secret))) WHERE id = \(id)")
        return id
    }

    static func found(_ results: [FetchedNotification]) -> [UUID: String] {
        var found: [UUID: String] = [:]
        for result in results {
            switch result.result {
            case .found(let notification): found[result.id] = notification.payloadJSON
            case .gone: found[result.id] = "gone"
            case .notFound: found[result.id] = "not found"
            }
        }
        return found
    }

    @Test("one statement for many devices keeps each request's rules: its own user, its credential, its throttle keys")
    func oneStatementManyDevices() async throws {
        try await TestDatabase.with { db in
            let phone = try await Self.device(db, user: "ada", token: "ada-phone", secret: [1])
            let tablet = try await Self.device(db, user: "ada", token: "ada-tablet", secret: [2])
            let bobs = try await Self.device(db, user: "bob", token: "bob-phone", secret: [3])
            let first = try await db.enqueue(user: "ada", payload: #"{"n":1}"#)
            let second = try await db.enqueue(user: "ada", payload: #"{"n":2}"#)
            let expired = try await db.enqueue(user: "ada", payload: #"{"n":3}"#)
            let bobsOwn = try await db.enqueue(user: "bob", payload: #"{"n":4}"#)
            try await db.execute("UPDATE securepush.notifications SET expires_at = now() - interval '1 second' WHERE id = \(expired)")
            try await db.execute(
                "INSERT INTO securepush.auth_failures (key, failures, blocked_until) VALUES ('addr:blocked', 9, now() + interval '1 hour')")
            let unknown = UUID()
            let requests = [
                ReadBatcher.Request(
                    proof: DeviceProof(deviceID: phone, secret: [1], throttleKeys: ["addr:a"]), ids: [first, bobsOwn, expired, unknown]),
                ReadBatcher.Request(proof: DeviceProof(deviceID: bobs, secret: [9], throttleKeys: ["addr:a"]), ids: [bobsOwn]),
                ReadBatcher.Request(proof: DeviceProof(deviceID: tablet, secret: [2], throttleKeys: ["addr:b"]), ids: [second, first]),
                ReadBatcher.Request(proof: DeviceProof(deviceID: UUID(), secret: [3], throttleKeys: ["addr:blocked"]), ids: [bobsOwn]),
            ]
            let database = StoreDatabase(client: db.client, logger: db.logger)
            let accesses = try await NotificationStore.fetch(requests, database: database)
            #expect(accesses.count == 4)

            guard case .granted(let phoneDevice, let phoneResults) = accesses[0] else { throw TestFailure("the phone was refused") }
            #expect(phoneDevice.userID == "ada")
            #expect(phoneResults.map(\.id) == [first, bobsOwn, expired, unknown], "in the order asked")
            #expect(Self.found(phoneResults) == [first: #"{"n": 1}"#, bobsOwn: "not found", expired: "gone", unknown: "not found"])

            guard case .refused(let wrongSecretBlock) = accesses[1] else { throw TestFailure("a wrong secret was granted") }
            #expect(wrongSecretBlock == 0)

            guard case .granted(_, let tabletResults) = accesses[2] else { throw TestFailure("the tablet was refused") }
            #expect(tabletResults.map(\.id) == [second, first])
            #expect(Self.found(tabletResults) == [second: #"{"n": 2}"#, first: #"{"n": 1}"#])

            guard case .refused(let blocked) = accesses[3] else { throw TestFailure("an unknown device was granted") }
            #expect(blocked > 3500, "the request's own blocked throttle key is reported (\(blocked) s)")

            // Bob's notification was asked for by ada's phone, a wrong secret and an unknown device: untouched.
            let bobsRead: Bool = try await db.scalar("SELECT read_at IS NOT NULL FROM securepush.notifications WHERE id = \(bobsOwn)")
            #expect(!bobsRead)
            let fetches: [String] = try await db.client.query(
                """
                SELECT n.payload->>'n' || ':' || d.token FROM securepush.fetches f
                JOIN securepush.notifications n ON n.id = f.notification_id JOIN securepush.devices d ON d.id = f.device_id
                ORDER BY 1
                """, logger: db.logger
            ).collect().map { try $0.decode(String.self) }
            #expect(fetches == ["1:ada-phone", "1:ada-tablet", "2:ada-tablet"], "each device's first fetch, once")
            let firstReader: UUID = try await db.scalar("SELECT read_by_device FROM securepush.notifications WHERE id = \(first)")
            #expect([phone, tablet].contains(firstReader))
            let seen: Int64 = try await db.scalar("SELECT count(*) FROM securepush.devices WHERE last_seen_at IS NOT NULL")
            #expect(seen == 2, "only the granted devices were seen")
        }
    }

    @Test(
        "a notification a producer holds (a cancel left open) is answered as it stands and unmarked; the statement, and the other reads in it, never wait"
    )
    func heldRowsDoNotStallReads() async throws {
        try await TestDatabase.with { db in
            let ada = try await Self.device(db, user: "held-ada", token: "held-ada", secret: [1])
            let bob = try await Self.device(db, user: "held-bob", token: "held-bob", secret: [2])
            let adas = try await db.enqueue(user: "held-ada", payload: #"{"n":1}"#)
            let bobs = try await db.enqueue(user: "held-bob", payload: #"{"n":2}"#)
            let requests = [
                ReadBatcher.Request(proof: DeviceProof(deviceID: ada, secret: [1], throttleKeys: ["addr:a"]), ids: [adas]),
                ReadBatcher.Request(proof: DeviceProof(deviceID: bob, secret: [2], throttleKeys: ["addr:b"]), ids: [bobs]),
            ]
            let database = StoreDatabase(client: db.client, logger: db.logger)
            try await db.client.withConnection { producer in
                _ = try await producer.query("BEGIN", logger: db.logger).collect()
                _ = try await producer.query("SELECT * FROM securepush.cancel(\(adas))", logger: db.logger).collect()
                // Before issue 47 the statement waited for the producer's commit; the deadline only ends a hang.
                let accesses = try await withThrowingTaskGroup(of: [DeviceAccess<[FetchedNotification]>]?.self) { group in
                    group.addTask { try await NotificationStore.fetch(requests, database: database) }
                    group.addTask {
                        try await Task.sleep(for: .seconds(15))
                        return nil
                    }
                    let first = try await group.next()!
                    group.cancelAll()
                    return try #require(first, "the read waited for the producer's open transaction")
                }
                guard case .granted(_, let adaResults) = accesses[0], case .granted(_, let bobResults) = accesses[1] else {
                    throw TestFailure("a device was refused")
                }
                #expect(Self.found(adaResults) == [adas: #"{"n": 1}"#], "answered as it stands (the cancel has not committed)")
                #expect(Self.found(bobResults) == [bobs: #"{"n": 2}"#])
                let marked: [UUID] = try await db.client.query(
                    "SELECT id FROM securepush.notifications WHERE read_at IS NOT NULL", logger: db.logger
                ).collect().map { try $0.decode(UUID.self) }
                #expect(marked == [bobs], "the held one is not marked")
                _ = try await producer.query("ROLLBACK", logger: db.logger).collect()
            }
            // Once free, a read marks it.
            _ = try await NotificationStore.fetch([requests[0]], database: database)
            let read: Bool = try await db.scalar("SELECT read_at IS NOT NULL FROM securepush.notifications WHERE id = \(adas)")
            #expect(read)
        }
    }

    @Test("a listing with payloads answers a notification a producer holds as it stands, unmarked, and marks the rest, without waiting")
    func heldRowsDoNotStallListings() async throws {
        try await TestDatabase.with { db in
            let ada = try await Self.device(db, user: "list-ada", token: "list-ada", secret: [3])
            let held = try await db.enqueue(user: "list-ada", payload: #"{"n":1}"#)
            let free = try await db.enqueue(user: "list-ada", payload: #"{"n":2}"#)
            let store = NotificationStore(client: db.client, logger: db.logger)
            let proof = DeviceProof(deviceID: ada, secret: [3], throttleKeys: ["addr:l"])
            try await db.client.withConnection { producer in
                _ = try await producer.query("BEGIN", logger: db.logger).collect()
                _ = try await producer.query("SELECT * FROM securepush.cancel(\(held))", logger: db.logger).collect()
                // Before issue 47's item 2 was finished, the listing waited for the producer's commit, here forever.
                let access = try await withThrowingTaskGroup(of: DeviceAccess<[NotificationSummary]>?.self) { group in
                    group.addTask { try await store.list(as: proof, unreadOnly: false, limit: 10, after: nil, payloads: true) }
                    group.addTask {
                        try await Task.sleep(for: .seconds(15))
                        return nil
                    }
                    let first = try await group.next()!
                    group.cancelAll()
                    return try #require(first, "the listing waited for the producer's open transaction")
                }
                guard case .granted(_, let items) = access else { throw TestFailure("the device was refused") }
                #expect(Set(items.map(\.notification.id)) == [held, free], "both listed, the held one as it stands")
                let marked: [UUID] = try await db.client.query(
                    "SELECT id FROM securepush.notifications WHERE read_at IS NOT NULL", logger: db.logger
                ).collect().map { try $0.decode(UUID.self) }
                #expect(marked == [free], "the held one is not marked")
                _ = try await producer.query("ROLLBACK", logger: db.logger).collect()
            }
        }
    }

    @Test("concurrent fetches through the store, one statement at a time: each reads its own")
    func concurrentFetchesGather() async throws {
        try await TestDatabase.with { db in
            var devices: [(UUID, UUID)] = []
            for index in 0..<40 {
                let device = try await Self.device(db, user: "u\(index)", token: "t\(index)", secret: [UInt8(index)])
                devices.append((device, try await db.enqueue(user: "u\(index)", payload: #"{"i":\#(index)}"#)))
            }
            let store = NotificationStore(client: db.client, logger: db.logger, readStatements: 1)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, (device, id)) in devices.enumerated() {
                    group.addTask {
                        let access = try await store.fetch(ids: [id], as: DeviceProof(deviceID: device, secret: [UInt8(index)], throttleKeys: []))
                        guard case .granted(let who, let results) = access, case .found(let notification) = results.first?.result else {
                            throw TestFailure("fetch \(index) did not read its notification")
                        }
                        #expect(who.userID == "u\(index)")
                        #expect(notification.payloadJSON == #"{"i": \#(index)}"#)
                    }
                }
                try await group.waitForAll()
            }
            let read: Int64 = try await db.scalar("SELECT count(*) FROM securepush.notifications WHERE read_at IS NOT NULL")
            #expect(read == 40)
        }
    }
}
