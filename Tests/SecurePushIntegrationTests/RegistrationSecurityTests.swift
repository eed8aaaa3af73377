import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import PostgresNIO
import SecurePushAPI
import SecurePushCore
import SecurePushStore
import SecurePushTestSupport
import Testing

@Suite("Registrations: re-binds audited, a rate per user, retired devices deleted; odd subjects and forwarded addresses")
struct RegistrationSecurityTests {
    static func register(_ client: any TestClientProtocol, token: String, bearer: String) async throws -> TestResponse {
        try await client.execute(
            uri: "/v1/devices", method: .post, headers: .bearer(bearer),
            body: ByteBuffer(string: #"{"platform":"simulated","token":"\#(token)"}"#))
    }

    @Test("registering another user's push token names the previous owner in the audit log and /status (the metric: TraceLogHygieneTests)")
    func rebind() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let victim = try await registerDevice(client, api, user: "victim", token: "shared-token")
            let victimDevice = String(victim.split(separator: ".")[0])
            let moved = try await Self.register(client, token: "shared-token", bearer: try await api.userToken("taker"))
            #expect(moved.status == .created)
            let row = try await db.client.query(
                """
                SELECT user_id, device_id::text, previous_user_id, previous_device_id::text FROM securepush.audit_log
                WHERE event = 'device_rebound'
                """, logger: db.logger
            ).collect()
            #expect(row.count == 1)
            let (user, device, previousUser, previousDevice) = try #require(row.first).decode((String, String, String, String).self)
            #expect(user == "taker" && previousUser == "victim")
            #expect(device == victimDevice && previousDevice == victimDevice)
            let status = try await client.execute(uri: "/status", method: .get)
            let events = status.body.json["security_events_last_hour"] as? [String: Any]
            #expect((events?["device_rebound"] as? Int) == 1)
            // The same user registering its own token again is no re-bind.
            _ = try await Self.register(client, token: "shared-token", bearer: try await api.userToken("taker"))
            let rebinds = try await db.auditEvents("device_rebound")
            #expect(rebinds == 1)
        }
    }

    @Test("registrations over SECUREPUSH_MAX_REGISTRATIONS_PER_HOUR answer 429 with Retry-After; another user is not affected")
    func registrationRate() async throws {
        try await TestDatabase.with { db in
            try await db.execute("UPDATE securepush.settings SET value = '3' WHERE key = 'max_registrations_per_hour'")
            try await APIHarness.with(db) { api, client in
                let token = try await api.userToken("busy")
                for index in 0..<3 {
                    #expect(try await Self.register(client, token: "busy-\(index)", bearer: token).status == .created)
                }
                let limited = try await Self.register(client, token: "busy-3", bearer: token)
                expectError(limited, .tooManyRequests, "too_many_requests")
                let wait = Int(limited.headers[.retryAfter] ?? "") ?? 0
                #expect((3500...3600).contains(wait), "until the first registration leaves the hour: \(wait)")
                #expect(try await Self.register(client, token: "calm-0", bearer: try await api.userToken("calm")).status == .created)
                let audited = try await db.auditEvents("registration_limited")
                #expect(audited == 1)
                // The SQL registration function has the same limit.
                await #expect(throws: (any Error).self) {
                    _ = try await db.scalar("SELECT device_id FROM securepush.register_device('busy', 'simulated', 'busy-sql')", as: UUID.self)
                }
            }
        }
    }

    @Test("devices inactive for longer than the retention are deleted with their deliveries; active and recent ones stay")
    func retention() async throws {
        try await TestDatabase.with { db in
            let old = try await db.insertDevice(user: "ret", token: "ret-old")
            let recent = try await db.insertDevice(user: "ret", token: "ret-recent")
            let active = try await db.insertDevice(user: "ret", token: "ret-active")
            _ = try await db.enqueue(user: "ret", payload: "{}")
            try await db.execute("UPDATE securepush.devices SET active = false WHERE id IN (\(old), \(recent))")
            try await db.execute("UPDATE securepush.devices SET updated_at = now() - interval '31 days' WHERE id = \(old)")
            try await db.execute("UPDATE securepush.devices SET updated_at = now() - interval '40 days' WHERE id = \(active)")
            let maintenance = PostgresQueueMaintenance(client: db.client, logger: db.logger)
            #expect(try await maintenance.deleteRetiredDevices(retention: .seconds(30 * 86_400)) == 1)
            let left: [UUID] = try await db.client.query("SELECT id FROM securepush.devices ORDER BY id", logger: db.logger)
                .collect().map { try $0.decode(UUID.self) }
            #expect(Set(left) == [recent, active])
            let orphans: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.deliveries WHERE device_id = \(old)")
            #expect(orphans == 0)
            let deleted = try await db.auditEvents("device_deleted", device: old)
            #expect(deleted == 1, "the deletion is audited")
            try await db.execute("SELECT securepush.audit('throttled', NULL, NULL, 'old')")
            try await db.execute("SET securepush.pruning_audit_log = 'on'")
            let pruned = try await maintenance.pruneAuditLog(retention: .seconds(60))
            #expect(pruned == 0, "a fresh audit row stays")
        }
    }

    @Test("a user token whose sub holds NUL or control characters answers 401, never 500")
    func controlCharactersInSubject() async throws {
        try await APIHarness.withDatabase { db, _, client in
            for sub in ["a\u{0}b", "tab\there", "\u{1b}[31m"] {
                let token = try UserTokenClaimsTests.token(
                    header: ["alg": "HS256", "typ": "JWT"], claims: ["sub": sub, "exp": Date().timeIntervalSince1970 + 600])
                expectError(try await Self.register(client, token: "nul-1", bearer: token), .unauthorized, "unauthorized")
            }
        }
    }

    @Test("odd X-Forwarded-For hops behind a trusted proxy count as the proxy's own; the failure is recorded, never a 500")
    func oddForwardedFor() async throws {
        try await TestDatabase.with { db in
            var limits = APIAbuseTests.throttled
            limits.trustedProxies = ["127.0.0.1"]
            let odd = [
                String(repeating: "e\u{301}\u{302}", count: 64), "not-an-address", "", " , ,", "::1%eth0", "1.2.3.4.5",
                String(repeating: "9", count: 200), "[2001:db8::1]:443",
            ]
            try await APIHarness.with(db, limits: limits) { api, client in
                let device = try await registerDevice(client, api, user: "xff", token: "xff-1")
                for hop in odd {
                    var headers = HTTPFields.bearer(APIAbuseTests.wrongSecret(device))
                    headers[HTTPField.Name("X-Forwarded-For")!] = hop
                    let response = try await client.execute(uri: "/v1/notifications", method: .get, headers: headers)
                    #expect(response.status == .unauthorized || response.status == .tooManyRequests, "\(hop.debugDescription): \(response.status)")
                }
                let keys: [String] = try await db.client.query("SELECT key FROM securepush.auth_failures", logger: db.logger)
                    .collect().map { try $0.decode(String.self) }
                // The bucket of 127.0.0.1 (`printf 127.0.0.1 | sha256sum`, first 4 hex digits).
                #expect(keys.contains("addr:12ca"), "odd hops count as the proxy's: \(keys)")
                #expect(keys.allSatisfy { $0.count <= 60 })
            }
        }
    }
}

@Suite("Read limits: O(1) tables with a bound")
struct RateLimiterBoundTests {
    @Test("200,000 distinct keys keep at most the capacity; a key in steady use keeps its (spent) bucket")
    func bounded() {
        let limiter = RateLimiter(RateLimit(perSecond: 0.001, burst: 2), capacity: 10_000)
        #expect(limiter.take("busy") == nil)
        #expect(limiter.take("busy") == nil)
        for index in 0..<200_000 {
            _ = limiter.take("device-\(index)")
            if index % 1000 == 0 { _ = limiter.wait("busy") }
            if index % 2000 == 0 { #expect(limiter.take("busy") != nil, "still spent at \(index)") }
        }
        #expect(limiter.count <= 10_000)
        #expect(limiter.wait("never-seen") == nil)
    }
}
