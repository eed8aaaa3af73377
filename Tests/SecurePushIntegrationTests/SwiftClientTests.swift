import Foundation
import Hummingbird
import HummingbirdTesting
import PostgresNIO
import SecurePushClient
import SecurePushProviders
import SecurePushTestSupport
import Synchronization
import Testing

@Suite("SecurePushClient (the Swift device library) against the real server")
struct SwiftClientTests {
    static func client(port: Int?, credentials: any CredentialStore, configuration: SecurePushClient.Configuration = .init()) throws
        -> SecurePushClient
    {
        SecurePushClient(baseURL: URL(string: "http://127.0.0.1:\(try #require(port))/")!, credentials: credentials, configuration: configuration)
    }

    @Test("SQL insert → the pushed APNs body → parsed → fetched → payload; rotation and unregistration")
    func endToEnd() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let store = InMemoryCredentialStore()
            let app = try Self.client(port: client.port, credentials: store)
            let registration = DeviceRegistration(fields: ["platform": .string("simulated"), "token": .string("swift-client-1")])
            let first = try await app.register(registration, userToken: try await api.userToken("sally"))
            #expect(try store.load() == first)

            let dispatcher = try DispatcherHarness(database: db)
            let id = try await db.enqueue(user: "sally", payload: #"{"title":"Payment received","body":"EUR 42 from Bob"}"#)
            try await eventually("the push") { dispatcher.pushes.contains { $0.notificationID == id.uuidString.lowercased() } }
            await dispatcher.stop()
            let push = try #require(dispatcher.pushes.first { $0.notificationID == id.uuidString.lowercased() })
            #expect(!push.body.contains("Payment") && !push.body.contains("Bob"), "id only: \(push.body)")

            let userInfo = try #require(try JSONSerialization.jsonObject(with: Data(push.body.utf8)) as? [String: Any])
            let message = PushMessage(apnsUserInfo: Dictionary(uniqueKeysWithValues: userInfo.map { (AnyHashable($0.key), $0.value) }))
            #expect(message == .notification(id))
            guard case .notification(let parsed) = message, case .found(let notification) = await app.fetch(parsed) else {
                Issue.record("the pushed id did not lead to the payload")
                return
            }
            #expect(notification.id == id)
            #expect(notification.payload["title"]?.stringValue == "Payment received")
            #expect(notification.payload["body"]?.stringValue == "EUR 42 from Bob")
            #expect(notification.readAt != nil)

            #expect(await app.fetch(UUID()) == .notFound)
            let stranger = try Self.client(port: client.port, credentials: InMemoryCredentialStore())
            try await stranger.register(
                DeviceRegistration(fields: ["platform": .string("simulated"), "token": .string("swift-client-2")]),
                userToken: try await api.userToken("mallory"))
            #expect(await stranger.fetch(id) == .notFound, "another user's notification is not found")

            let rotated = try await app.rotate()
            #expect(rotated.deviceID == first.deviceID && rotated.secret != first.secret)
            let stale = try Self.client(port: client.port, credentials: InMemoryCredentialStore(first))
            #expect(await stale.fetch(id) == .unauthorized, "the old secret stops working at once")
            guard case .found = await app.fetch(id) else {
                Issue.record("the new secret works")
                return
            }
            try await app.unregister()
            #expect(try store.load() == nil)
            #expect(await stale.fetch(id) == .unauthorized)
            await #expect(throws: SecurePushClientError.notRegistered) { try await app.rotate() }
        }
    }

    @Test("delivery controls: a new push token with the credential alone, quiet hours, categories; the collapse digest read from the push")
    func deliveryControls() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let app = try Self.client(port: client.port, credentials: InMemoryCredentialStore())
            let registration = DeviceRegistration(fields: ["platform": .string("simulated"), "token": .string("swift-old-token")])
            let credential = try await app.register(registration, userToken: try await api.userToken("carla"))
            try await app.updatePushToken(DeviceRegistration(fields: ["platform": .string("simulated"), "token": .string("swift-new-token")]))
            let token: String = try await db.scalar("SELECT token FROM securepush.devices WHERE id = \(credential.deviceID)")
            #expect(token == "swift-new-token")
            await #expect(throws: SecurePushClientError.self) {
                try await app.updatePushToken(DeviceRegistration.fcm(token: "another-platform-token-0123456789"))
            }

            #expect(try await app.quietHours() == nil)
            try await app.setQuietHours(QuietHours(timeZone: "Europe/Berlin", start: "22:00", end: "07:00"))
            #expect(try await app.quietHours() == QuietHours(timeZone: "Europe/Berlin", start: "22:00", end: "07:00"))
            await #expect(throws: SecurePushClientError.self) {
                try await app.setQuietHours(QuietHours(timeZone: "Nowhere/City", start: "22:00", end: "07:00"))
            }
            try await app.clearQuietHours()
            #expect(try await app.quietHours() == nil)

            try await app.setCategory("news", muted: true)
            let id: UUID = try await db.scalar(
                "SELECT securepush.enqueue(user_id => 'carla', payload => '{}'::jsonb, category => 'offers', collapse_key => 'offer-of-the-day')")
            #expect(try await app.categories().map { "\($0.name):\($0.muted)" } == ["news:true", "offers:false"])
            guard case .found(let fetched) = await app.fetch(id) else {
                Issue.record("the notification was not fetched")
                return
            }
            #expect(fetched.category == "offers")

            let dispatcher = try DispatcherHarness(database: db)
            let again: UUID = try await db.scalar(
                "SELECT securepush.enqueue(user_id => 'carla', payload => '{}'::jsonb, collapse_key => 'offer-of-the-day')")
            try await eventually("the push") { dispatcher.pushes.contains { $0.notificationID == again.uuidString.lowercased() } }
            await dispatcher.stop()
            let push = try #require(dispatcher.pushes.first { $0.notificationID == again.uuidString.lowercased() })
            #expect(push.token == "swift-new-token")
            let userInfo = try #require(try JSONSerialization.jsonObject(with: Data(push.body.utf8)) as? [String: Any])
            let presentation = PushPresentation(apnsUserInfo: Dictionary(uniqueKeysWithValues: userInfo.map { (AnyHashable($0.key), $0.value) }))
            let digest: String = try await db.scalar("SELECT securepush.collapse_digest('carla', 'offer-of-the-day')")
            #expect(presentation.collapseID == digest)
            #expect(presentation.identifier(for: again) == digest, "shown under the digest, so it replaces the earlier one")
        }
    }

    @Test("catch-up with payloads and the batch fetch: found, not found (unknown and foreign alike), gone")
    func catchUpAndBatch() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let app = try Self.client(port: client.port, credentials: InMemoryCredentialStore())
            try await app.register(
                DeviceRegistration(fields: ["platform": .string("simulated"), "token": .string("swift-batch-1")]),
                userToken: try await api.userToken("tess"))
            var ids: [UUID] = []
            for index in 0..<3 {
                ids.append(try await db.enqueue(user: "tess", payload: #"{"title":"T\#(index)"}"#))
            }
            let foreign = try await db.enqueue(user: "other", payload: #"{"title":"not yours"}"#)
            let purged = try await db.enqueue(user: "tess", payload: #"{"title":"purged"}"#)
            try await db.execute("UPDATE securepush.notifications SET payload = NULL, purged_at = now() WHERE id = \(purged)")

            let unread = try await app.catchUp()
            #expect(Set(unread.map(\.id)) == Set(ids), "the unread ones with payloads")
            #expect(Set(unread.compactMap { $0.payload["title"]?.stringValue }) == ["T0", "T1", "T2"])
            #expect(try await app.catchUp().isEmpty, "each returned item is now read")

            let unknown = UUID()
            let batch = try await app.fetch([ids[0], unknown, foreign, purged, ids[0]])
            #expect(batch.found.map(\.id) == [ids[0]])
            #expect(batch.missing == [unknown: .notFound, foreign: .notFound, purged: .gone])
        }
    }

    /// An HTTP server that counts requests and answers each with `status`, or never answers (`nil`).
    static func withStub(
        status: HTTPResponse.Status?, _ body: @Sendable (_ port: Int?, _ requests: @escaping @Sendable () -> Int) async throws -> Void
    ) async throws {
        let count = Atomic<Int>(0)
        let released = Atomic<Bool>(false)
        let router = Router()
        router.get("/v1/notifications/:id") { _, _ -> Response in
            count.add(1, ordering: .relaxed)
            guard let status else {
                // Stalls until the test is over (the server's shutdown waits for requests in flight).
                while !released.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(20)) }
                return Response(status: .ok)
            }
            return Response(status: status)
        }
        try await Application(router: router).test(.live) { client in
            defer { released.store(true, ordering: .relaxed) }
            try await body(client.port) { count.load(ordering: .relaxed) }
        }
    }

    @Test("a stalling server: fetch gives up at the overall deadline, not later")
    func deadline() async throws {
        try await Self.withStub(status: nil) { port, requests in
            var configuration = SecurePushClient.Configuration()
            // Wide margins: on a loaded machine an attempt and its back-off take longer than their nominal times.
            configuration.deadline = .seconds(4)
            configuration.requestTimeout = .milliseconds(500)
            configuration.maxAttempts = 20  // the deadline, not the attempt count, ends this call
            let app = try Self.client(
                port: port, credentials: InMemoryCredentialStore(DeviceCredential(deviceID: UUID(), secret: "x")), configuration: configuration)
            let clock = ContinuousClock()
            let start = clock.now
            let result = await app.fetch(UUID())
            let elapsed = clock.now - start
            guard case .unavailable = result else {
                Issue.record("expected unavailable, got \(result)")
                return
            }
            #expect(elapsed >= .milliseconds(3800) && elapsed < .seconds(7), "gave up at the deadline: \(elapsed)")
            #expect(requests() >= 2, "timed-out requests are retried within the deadline: \(requests())")
        }
    }

    @Test("404, 410 and 401 are never retried; 503 is, up to maxAttempts")
    func retries() async throws {
        for (status, expected, attempts) in [
            (HTTPResponse.Status.notFound, FetchResult.notFound, 1), (.gone, .gone, 1), (.unauthorized, .unauthorized, 1),
            (.serviceUnavailable, .unavailable(reason: "HTTP 503"), 3),
        ] {
            try await Self.withStub(status: status) { port, requests in
                var configuration = SecurePushClient.Configuration()
                configuration.maxAttempts = 3
                let app = try Self.client(
                    port: port, credentials: InMemoryCredentialStore(DeviceCredential(deviceID: UUID(), secret: "x")), configuration: configuration)
                #expect(await app.fetch(UUID()) == expected, "\(status)")
                #expect(requests() == attempts, "\(status): \(requests()) requests")
            }
        }
    }
}
