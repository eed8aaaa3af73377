import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import SecurePushCore
import SecurePushPostgres
import Synchronization
import Testing

@testable import SecurePushAPI
@testable import SecurePushStore

/// The API's HTTP behaviour with its stores in memory (`MemoryStores`): what a handler answers before,
/// around and instead of a store call. No database: what SQL does is tested in SecurePushIntegrationTests.
@Suite("HTTP behaviour, stores in memory")
struct HTTPBehaviourTests {
    static let secret = "test-secret-0123456789abcdef-0123456789"

    /// Runs `body` with the real router on `memory`'s stores, its context adjusted by `configure`.
    static func withAPI<T: Sendable>(
        _ memory: MemoryStores, configure: @Sendable (inout APIContext) -> Void = { _ in },
        _ body: @Sendable (any TestClientProtocol) async throws -> T
    ) async throws -> T {
        var context = APIContext(
            stores: memory.stores, userTokens: try await UserTokenVerifier(key: .hs256(secret: secret), issuer: nil, audience: nil),
            metricsText: { "" })
        configure(&context)
        let app = Application(router: APIRouter.build(context))
        return try await app.test(.router) { client in try await body(client) }
    }

    static func bearer(_ token: String) -> HTTPFields {
        var fields = HTTPFields()
        fields[.authorization] = "Bearer \(token)"
        fields[.contentType] = "application/json"
        return fields
    }

    static func code(_ buffer: ByteBuffer) -> String? {
        let body = try? JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)) as? [String: Any]
        return (body?["error"] as? [String: Any])?["code"] as? String
    }

    @Test("a store call that outlasts the request's database deadline answers 503 with Retry-After, never 500")
    func deadline() async throws {
        let memory = MemoryStores()
        let device = memory.addDevice(userID: "ada")
        memory.state.withLock { $0.delay = .seconds(30) }
        try await Self.withAPI(memory, configure: { $0.databaseTimeout = .milliseconds(100) }) { client in
            let started = ContinuousClock.now
            try await client.execute(uri: "/v1/notifications", method: .get, headers: Self.bearer(device.bearer)) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(response.headers[.retryAfter] != nil)
                #expect(Self.code(response.body) == "unavailable")
            }
            #expect(ContinuousClock.now - started < .seconds(10), "answered at the deadline, not when the store returned")
        }
    }

    @Test("a malformed notification id is 400 and reads nothing; an unknown one and another user's are the same 404")
    func notificationIDs() async throws {
        let memory = MemoryStores()
        let ada = memory.addDevice(userID: "ada")
        let bobs = memory.addNotification(userID: "bob", payload: #"{"secret":"bob's"}"#)
        let adas = memory.addNotification(userID: "ada", payload: #"{"hello":"ada"}"#)
        try await Self.withAPI(memory) { client in
            try await client.execute(uri: "/v1/notifications/not-an-id", method: .get, headers: Self.bearer(ada.bearer)) { response in
                #expect(response.status == .badRequest)
            }
            #expect(!memory.state.withLock { $0.calls }.contains("fetch"), "refused before the read")
            var bodies: [String] = []
            for id in [bobs, UUID()] {
                try await client.execute(uri: "/v1/notifications/\(id.uuidString.lowercased())", method: .get, headers: Self.bearer(ada.bearer)) {
                    response in
                    #expect(response.status == .notFound)
                    bodies.append(String(buffer: response.body))
                }
            }
            #expect(bodies[0] == bodies[1], "another user's notification answers exactly like an unknown id")
            #expect(!bodies[0].contains("bob"))
            try await client.execute(uri: "/v1/notifications/\(adas.uuidString.lowercased())", method: .get, headers: Self.bearer(ada.bearer)) {
                response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains("ada"))
            }
        }
    }

    @Test("a wrong device secret records a failure under the client's and the device's throttle keys; a blocked key answers 429 with Retry-After")
    func throttle() async throws {
        let memory = MemoryStores()
        let device = memory.addDevice(userID: "ada")
        let wrong = "\(device.id.uuidString.lowercased()).\(Data(repeating: 9, count: 32).base64URLEncodedString)"
        try await Self.withAPI(memory) { client in
            try await client.execute(uri: "/v1/notifications", method: .get, headers: Self.bearer(wrong)) { response in
                #expect(response.status == .unauthorized)
            }
            let failures = memory.state.withLock { $0.failures }
            #expect(failures.count == 1)
            #expect(failures.first?.last == AuthThrottle.keys(client: "any", deviceID: device.id).last, "keyed by the device")
            #expect(failures.first?.contains { $0.hasPrefix("device:") } == true && failures.first?.contains { $0.hasPrefix("addr:") } == true)
            memory.state.withLock { $0.blockedFor = 42 }
            try await client.execute(uri: "/v1/notifications", method: .get, headers: Self.bearer(wrong)) { response in
                #expect(response.status == .tooManyRequests)
                #expect(response.headers[.retryAfter] == "42")
            }
        }
    }

    @Test("quiet hours: a malformed window is 400 naming the field and never reaches the store; a valid one is stored")
    func quietHours() async throws {
        let memory = MemoryStores()
        let device = memory.addDevice(userID: "ada")
        try await Self.withAPI(memory) { client in
            let bad = ByteBuffer(string: #"{"time_zone": "Europe/Berlin", "start": "25:00", "end": "07:00"}"#)
            try await client.execute(uri: "/v1/quiet-hours", method: .put, headers: Self.bearer(device.bearer), body: bad) { response in
                #expect(response.status == .badRequest)
                #expect(String(buffer: response.body).contains("start"))
            }
            #expect(!memory.state.withLock { $0.calls }.contains("setQuietHours"))
            let good = ByteBuffer(string: #"{"time_zone": "Europe/Berlin", "start": "22:00", "end": "07:00"}"#)
            try await client.execute(uri: "/v1/quiet-hours", method: .put, headers: Self.bearer(device.bearer), body: good) { response in
                #expect(response.status == .ok)
            }
            #expect(memory.state.withLock { $0.quietHours["ada"] }?.start == "22:00")
        }
    }

    @Test("/readyz tells the truth: a read-only standby is not ready")
    func readiness() async throws {
        let memory = MemoryStores()
        try await Self.withAPI(memory) { client in
            try await client.execute(uri: "/readyz", method: .get) { response in #expect(response.status == .ok) }
            memory.state.withLock { $0.role = .standby }
            try await client.execute(uri: "/readyz", method: .get) { response in #expect(response.status == .serviceUnavailable) }
        }
    }
}
