import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOFoundationEssentialsCompat
import SecurePushAPI
import SecurePushCore
import SecurePushServer
import SecurePushStore

/// Runs the real HTTP API (Hummingbird, live on loopback) against a test database.
public struct APIHarness: Sendable {
    /// The HS256 secret test user tokens are signed with.
    public static let jwtSecret = "test-secret-0123456789abcdef-0123456789"

    public let database: TestDatabase
    public let logs: CapturedLogs
    public let tokens: UserTokenVerifier

    /// Starts the API and runs `body` with a client that can send concurrent requests.
    public static func with<T: Sendable>(
        _ database: TestDatabase,
        logs: CapturedLogs = CapturedLogs(),
        databaseTimeout: Duration? = nil,
        limits: APILimits? = nil,
        environment: [String: String] = [:],
        _ body: @Sendable (APIHarness, any TestClientProtocol) async throws -> T
    ) async throws -> T {
        var values = ProcessInfo.processInfo.environment
        values["SECUREPUSH_USER_JWT_SECRET"] = jwtSecret
        values["DATABASE_URL"] = "postgres://test@127.0.0.1/test"
        // The public push services plus the example host the tests register Web Push endpoints on.
        values["SECUREPUSH_WEBPUSH_ALLOWED_HOSTS"] = (PushEndpointPolicies.defaultWebPushHosts + ["push.example.com"]).joined(separator: ",")
        values.merge(environment) { $1 }
        let configuration = try SecurePushConfiguration(environment: values)
        let logger = logs.logger(label: "securepush.test.api")
        var assembly = try await APIAssembly(client: database.client, configuration: configuration, logger: logger)
        if let databaseTimeout { assembly.context.databaseTimeout = databaseTimeout }
        assembly.context.limits = limits ?? .lenientForTests
        let tokens = try await configuration.http.makeUserTokenVerifier()
        let harness = APIHarness(database: database, logs: logs, tokens: tokens)
        let app = assembly.application(host: "127.0.0.1", port: 0, logger: logger)
        return try await app.test(.ahc(.http)) { client in
            try await body(harness, ContractCheckingClient(client))
        }
    }

    /// Runs `body` with a fresh test database and the API started on it (`TestDatabase.with`, then `with`).
    public static func withDatabase<T: Sendable>(
        _ body: @Sendable (TestDatabase, APIHarness, any TestClientProtocol) async throws -> T
    ) async throws -> T {
        try await TestDatabase.with { db in
            try await with(db) { api, client in try await body(db, api, client) }
        }
    }

    /// A valid user token for `user`.
    public func userToken(_ user: String, expiresIn seconds: TimeInterval = 3600) async throws -> String {
        try await tokens.sign(UserClaims(subject: user, expiresAt: Date().addingTimeInterval(seconds)))
    }
}

extension HTTPFields {
    /// `Authorization: Bearer <token>` plus a JSON content type.
    public static func bearer(_ token: String) -> HTTPFields {
        var fields = HTTPFields()
        fields[.authorization] = "Bearer \(token)"
        fields[.contentType] = "application/json"
        return fields
    }
}

extension ByteBuffer {
    /// The buffer as UTF-8 text.
    public var text: String { String(buffer: self) }

    /// The buffer parsed as a JSON object (empty when it is not one).
    public var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer: self))) as? [String: Any] ?? [:]
    }
}

extension APILimits {
    /// Limits no ordinary test reaches (many failed attempts from 127.0.0.1 in the credential matrix,
    /// bursts of reads); the abuse tests set their own.
    public static var lenientForTests: APILimits {
        var limits = APILimits()
        limits.authThrottle.freeFailures = 1000
        limits.deviceReads = RateLimit(perSecond: 10_000, burst: 100_000)
        limits.userReads = RateLimit(perSecond: 10_000, burst: 100_000)
        return limits
    }
}
