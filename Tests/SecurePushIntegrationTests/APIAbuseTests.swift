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

@Suite("HTTP API: abuse limits")
struct APIAbuseTests {
    /// Throttling after 3 free failures, 30 s doubling (long enough that no block runs out by itself on a
    /// loaded machine; the tests end blocks through the database's clock), with 127.0.0.1 (the test client) a trusted proxy so
    /// `X-Forwarded-For` names the client.
    static var throttled: APILimits {
        var limits = APILimits.lenientForTests
        limits.authThrottle = AuthThrottlePolicy(freeFailures: 3, baseBlock: .seconds(30), maxBlock: .seconds(3600), window: .seconds(600))
        limits.trustedProxies = ["127.0.0.1"]
        return limits
    }

    static func headers(_ credential: String, from client: String? = nil) -> HTTPFields {
        var fields = HTTPFields.bearer(credential)
        if let client { fields[HTTPField.Name("X-Forwarded-For")!] = client }
        return fields
    }

    static func wrongSecret(_ credential: String) -> String {
        let parts = credential.split(separator: ".")
        return "\(parts[0]).\(String(parts[1].reversed()))"
    }

    @Test("failed device credentials are throttled per client address: 429 with Retry-After, growing; other clients unaffected")
    func perAddress() async throws {
        try await TestDatabase.with { db in
            try await APIHarness.with(db, limits: Self.throttled) { api, client in
                let victim = try await registerDevice(client, api, user: "vic", token: "vic-1")
                let other = try await registerDevice(client, api, user: "oli", token: "oli-1")
                let id = try await db.enqueue(user: "oli", payload: "{}")
                let uri = "/v1/notifications/\(id)"
                for _ in 0..<3 {
                    let response = try await client.execute(
                        uri: uri, method: .get, headers: Self.headers(Self.wrongSecret(victim), from: "203.0.113.7"))
                    expectError(response, .unauthorized, "unauthorized")
                }
                let blocked = try await client.execute(uri: uri, method: .get, headers: Self.headers(Self.wrongSecret(victim), from: "203.0.113.7"))
                expectError(blocked, .tooManyRequests, "too_many_requests")
                #expect(blocked.headers[.retryAfter] == "30")
                // A correct credential is served from the blocked address (a carrier NAT address is shared by
                // many phones); a wrong one for another device is refused there without a database check.
                let sameAddress = try await client.execute(uri: uri, method: .get, headers: Self.headers(other, from: "203.0.113.7"))
                #expect(sameAddress.status == .ok, "a valid credential is never locked out")
                let otherFailure = try await client.execute(
                    uri: uri, method: .get, headers: Self.headers(Self.wrongSecret(other), from: "203.0.113.7"))
                expectError(otherFailure, .tooManyRequests, "too_many_requests")
                let otherAddress = try await client.execute(uri: uri, method: .get, headers: Self.headers(other, from: "198.51.100.9"))
                #expect(otherAddress.status == .ok)

                // Let the block run out (through the database's clock, not a sleep); the next failure blocks for twice as long.
                try await db.execute("UPDATE securepush.auth_failures SET blocked_until = now() - interval '1 millisecond'")
                let again = try await client.execute(uri: uri, method: .get, headers: Self.headers(Self.wrongSecret(victim), from: "203.0.113.7"))
                expectError(again, .tooManyRequests, "too_many_requests")
                #expect(again.headers[.retryAfter] == "60", "the block doubles: \(again.headers[.retryAfter] ?? "none")")

                let throttledEvents = try await db.auditEvents("throttled")
                #expect(throttledEvents >= 2)
                let invalid = try await db.auditEvents("token_invalid")
                #expect(invalid >= 4)
                let leaked: Int64 = try await db.scalar(
                    "SELECT count(*)::bigint FROM securepush.audit_log WHERE reason LIKE '%' || \(String(victim.split(separator: ".")[1])) || '%'")
                #expect(leaked == 0, "no secret in the audit log")
            }
        }
    }

    @Test("failures against one device id from many addresses block failures for that id in every API process; its valid credential still works")
    func perDeviceAcrossProcesses() async throws {
        let limits = Self.throttled
        try await TestDatabase.with { db in
            try await APIHarness.with(db, limits: limits) { api, first in
                let target = try await registerDevice(first, api, user: "tia", token: "tia-1")
                // The attack of the issue: six wrong secrets for the victim's id, from six addresses.
                for attempt in 0..<6 {
                    _ = try await first.execute(
                        uri: "/v1/notifications", method: .get, headers: Self.headers(Self.wrongSecret(target), from: "192.0.2.\(attempt + 1)"))
                }
                // A second API process on the same database: a further failure for that id is refused with
                // 429 from a fresh address, and the victim's own credential is served from any address.
                try await APIHarness.with(db, limits: limits) { _, second in
                    let failure = try await second.execute(
                        uri: "/v1/notifications", method: .get, headers: Self.headers(Self.wrongSecret(target), from: "192.0.2.98"))
                    expectError(failure, .tooManyRequests, "too_many_requests")
                    #expect(failure.headers[.retryAfter] != nil)
                    for address in ["192.0.2.99", "192.0.2.1"] {
                        let response = try await second.execute(uri: "/v1/notifications", method: .get, headers: Self.headers(target, from: address))
                        #expect(response.status == .ok, "the victim's valid credential works from \(address)")
                    }
                }
            }
        }
    }

    @Test("wrong secrets for a victim's device id do not spend the victim's read allowance")
    func noPreAuthenticationDrain() async throws {
        let limits = {
            var limits = APILimits.lenientForTests
            limits.deviceReads = RateLimit(perSecond: 0.001, burst: 3)
            limits.authThrottle = AuthThrottlePolicy(freeFailures: 1000, baseBlock: .seconds(1), maxBlock: .seconds(1), window: .seconds(600))
            return limits
        }()
        try await TestDatabase.with { db in
            try await APIHarness.with(db, limits: limits) { api, client in
                let victim = try await registerDevice(client, api, user: "dra", token: "dra-1")
                for _ in 0..<20 {
                    expectError(
                        try await client.execute(uri: "/v1/notifications", method: .get, headers: .bearer(Self.wrongSecret(victim))),
                        .unauthorized, "unauthorized")
                }
                for read in 0..<3 {
                    let response = try await client.execute(uri: "/v1/notifications", method: .get, headers: .bearer(victim))
                    #expect(response.status == .ok, "read \(read + 1) of the burst of 3")
                }
                let spent = try await client.execute(uri: "/v1/notifications", method: .get, headers: .bearer(victim))
                expectError(spent, .tooManyRequests, "too_many_requests")
            }
        }
    }

    @Test("X-Forwarded-For from a peer that is not a trusted proxy is ignored")
    func untrustedForwardedFor() async throws {
        try await TestDatabase.with { db in
            var limits = Self.throttled
            limits.trustedProxies = []
            try await APIHarness.with(db, limits: limits) { api, client in
                let device = try await registerDevice(client, api, user: "ulf", token: "ulf-1")
                for index in 0..<4 {
                    _ = try await client.execute(
                        uri: "/v1/notifications", method: .get, headers: Self.headers(Self.wrongSecret(device), from: "203.0.113.\(index)"))
                }
                let keys: [String] = try await db.client.query("SELECT key FROM securepush.auth_failures ORDER BY key", logger: db.logger)
                    .collect().map { try $0.decode(String.self) }
                // Keys are buckets: the first 4 hex digits of SHA-256 of the address (`printf 127.0.0.1 | sha256sum`).
                #expect(keys.filter { $0.hasPrefix("addr:") } == ["addr:12ca"], "failures counted against the real peer (127.0.0.1) only: \(keys)")
            }
        }
    }

    @Test("a trusted proxy block (CIDR): the client is the last X-Forwarded-For hop outside it")
    func trustedProxyBlock() async throws {
        try await TestDatabase.with { db in
            var limits = Self.throttled
            limits.trustedProxies = ["127.0.0.0/8"]
            try await APIHarness.with(db, limits: limits) { api, client in
                let device = try await registerDevice(client, api, user: "uma", token: "uma-1")
                _ = try await client.execute(
                    uri: "/v1/notifications", method: .get,
                    headers: Self.headers(Self.wrongSecret(device), from: "203.0.113.50, 198.51.100.9, 127.0.0.5"))
                let keys: [String] = try await db.client.query("SELECT key FROM securepush.auth_failures ORDER BY key", logger: db.logger)
                    .collect().map { try $0.decode(String.self) }
                // 198.51.100.9's bucket; not 127.0.0.1's (12ca), 127.0.0.5's (2228) or 203.0.113.50's (3b5c).
                #expect(keys.filter { $0.hasPrefix("addr:") } == ["addr:2ba3"], "the hop before the trusted 127.0.0.5 is the client: \(keys)")
            }
        }
    }

    @Test("failed user tokens are throttled per client address")
    func userTokens() async throws {
        try await TestDatabase.with { db in
            try await APIHarness.with(db, limits: Self.throttled) { api, client in
                let body = ByteBuffer(string: #"{"platform":"simulated","token":"t-1"}"#)
                for _ in 0..<3 {
                    expectError(
                        try await client.execute(
                            uri: "/v1/devices", method: .post, headers: Self.headers("not-a-jwt", from: "203.0.113.50"), body: body),
                        .unauthorized, "unauthorized")
                }
                let blocked = try await client.execute(
                    uri: "/v1/devices", method: .post, headers: Self.headers("not-a-jwt", from: "203.0.113.50"), body: body)
                expectError(blocked, .tooManyRequests, "too_many_requests")
                let valid = try await api.userToken("uma")
                let servedAnyway = try await client.execute(
                    uri: "/v1/devices", method: .post, headers: Self.headers(valid, from: "203.0.113.50"), body: body)
                #expect(servedAnyway.status == .created, "a valid user token is served from a blocked address")
                let missing = try await client.execute(
                    uri: "/v1/devices", method: .post, headers: Self.headers("", from: "203.0.113.50"), body: body)
                expectError(missing, .tooManyRequests, "too_many_requests")
                let elsewhere = try await client.execute(
                    uri: "/v1/devices", method: .post, headers: Self.headers(valid, from: "203.0.113.51"), body: body)
                #expect(elsewhere.status == .created)
            }
        }
    }

    @Test("registering one device over the cap retires the user's least recently seen device")
    func deviceCap() async throws {
        try await TestDatabase.with { db in
            try await db.execute("UPDATE securepush.settings SET value = '3' WHERE key = 'max_devices_per_user'")
            try await APIHarness.with(db) { api, client in
                var credentials: [String] = []
                for index in 1...3 {
                    credentials.append(try await registerDevice(client, api, user: "cap", token: "cap-\(index)"))
                }
                let oldestID = try #require(UUID(uuidString: String(credentials[0].split(separator: ".")[0])))
                try await db.execute("UPDATE securepush.devices SET last_seen_at = now() - interval '2 days' WHERE id = \(oldestID)")
                let pending = try await db.enqueue(user: "cap", payload: "{}")
                let newest = try await registerDevice(client, api, user: "cap", token: "cap-4")
                let active: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.devices WHERE user_id = 'cap' AND active")
                #expect(active == 3)
                let reason: String? = try await db.scalar("SELECT deactivated_reason FROM securepush.devices WHERE id = \(oldestID)")
                #expect(reason?.contains("over the per-user device limit") == true)
                expectError(
                    try await client.execute(uri: "/v1/notifications/\(pending)", method: .get, headers: .bearer(credentials[0])), .unauthorized,
                    "unauthorized")
                #expect(try await client.execute(uri: "/v1/notifications/\(pending)", method: .get, headers: .bearer(newest)).status == .ok)
                let waiting: Int64 = try await db.scalar(
                    "SELECT count(*)::bigint FROM securepush.deliveries WHERE device_id = \(oldestID) AND state = 'pending'")
                #expect(waiting == 0, "the retired device's pending deliveries were cancelled")
                let retired = try await db.auditEvents("device_retired", device: oldestID)
                #expect(retired == 1)
            }
        }
    }

    @Test("rotate gives the device a new secret and the old one stops working at once")
    func rotate() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let old = try await registerDevice(client, api, user: "rot", token: "rot-1")
            let response = try await client.execute(uri: "/v1/devices/current/rotate", method: .post, headers: .bearer(old))
            #expect(response.status == .ok)
            let id = try #require(response.body.json["device_id"] as? String)
            let secret = try #require(response.body.json["device_secret"] as? String)
            #expect(id == String(old.split(separator: ".")[0]))
            #expect(secret != String(old.split(separator: ".")[1]))
            expectError(try await client.execute(uri: "/v1/notifications", method: .get, headers: .bearer(old)), .unauthorized, "unauthorized")
            #expect(try await client.execute(uri: "/v1/notifications", method: .get, headers: .bearer("\(id).\(secret)")).status == .ok)
            let rotated = try await db.auditEvents("device_rotated")
            #expect(rotated == 1)
        }
    }

    @Test("reads are rate-limited per device and per user, with Retry-After; other devices are not affected")
    func readRateLimits() async throws {
        try await TestDatabase.with { db in
            var limits = APILimits.lenientForTests
            limits.deviceReads = RateLimit(perSecond: 0.01, burst: 5)
            limits.userReads = RateLimit(perSecond: 0.01, burst: 8)
            try await APIHarness.with(db, limits: limits) { api, client in
                let first = try await registerDevice(client, api, user: "rl", token: "rl-1")
                let second = try await registerDevice(client, api, user: "rl", token: "rl-2")
                let stranger = try await registerDevice(client, api, user: "other", token: "o-1")
                for _ in 0..<5 {
                    #expect(try await client.execute(uri: "/v1/notifications", method: .get, headers: .bearer(first)).status == .ok)
                }
                let limited = try await client.execute(uri: "/v1/notifications", method: .get, headers: .bearer(first))
                expectError(limited, .tooManyRequests, "too_many_requests")
                #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 >= 1)
                // (Refill is slow enough, 1 per 100 s, that a loaded machine cannot refill a token meanwhile.)
                // The user's other device shares the user's bucket (8): 3 more of its 5 pass, then the user is limited.
                var statuses: [HTTPResponse.Status] = []
                for _ in 0..<4 {
                    statuses.append(try await client.execute(uri: "/v1/notifications", method: .get, headers: .bearer(second)).status)
                }
                #expect(statuses == [.ok, .ok, .ok, .tooManyRequests], "\(statuses)")
                #expect(try await client.execute(uri: "/v1/notifications", method: .get, headers: .bearer(stranger)).status == .ok)
            }
        }
    }

    @Test("devices not seen for SECUREPUSH_DEVICE_STALE_AFTER are retired by maintenance")
    func staleDevices() async throws {
        try await TestDatabase.with { db in
            let stale = try await db.insertDevice(user: "old", token: "old-1")
            let fresh = try await db.insertDevice(user: "old", token: "old-2")
            try await db.execute("UPDATE securepush.devices SET last_seen_at = now() - interval '300 days' WHERE id = \(stale)")
            try await db.execute("UPDATE securepush.devices SET last_seen_at = now() - interval '10 days' WHERE id = \(fresh)")
            let maintenance = PostgresQueueMaintenance(client: db.client, logger: db.logger)
            #expect(try await maintenance.retireStaleDevices(staleAfter: .seconds(270 * 86_400)) == 1)
            let staleActive: Bool = try await db.scalar("SELECT active FROM securepush.devices WHERE id = \(stale)")
            let freshActive: Bool = try await db.scalar("SELECT active FROM securepush.devices WHERE id = \(fresh)")
            #expect(!staleActive)
            #expect(freshActive)
            let audited = try await db.auditEvents("device_retired", device: stale)
            #expect(audited == 1)
        }
    }

    @Test("the audit log is append-only, and /status counts its events")
    func auditLog() async throws {
        try await APIHarness.withDatabase { db, api, client in
            _ = try await registerDevice(client, api, user: "aud", token: "aud-1")
            await #expect(throws: (any Error).self) { try await db.execute("UPDATE securepush.audit_log SET reason = 'x'") }
            await #expect(throws: (any Error).self) { try await db.execute("DELETE FROM securepush.audit_log") }
            let status = try await client.execute(uri: "/status", method: .get)
            let events = status.body.json["security_events_last_hour"] as? [String: Any]
            #expect(events?["device_registered"] as? Int == 1, "\(status.body.text)")
            #expect(events?["throttled"] as? Int == 0)
        }
    }

    @Test("oversized bodies and header sections are refused")
    func httpLimits() async throws {
        try await TestDatabase.with { db in
            var limits = APILimits.lenientForTests
            limits.maxRequestBodyBytes = 2048
            try await APIHarness.with(db, limits: limits) { api, client in
                let token = try await api.userToken("big")
                let body = ByteBuffer(string: #"{"platform":"simulated","token":"\#(String(repeating: "x", count: 4000))"}"#)
                let tooLarge = try await client.execute(uri: "/v1/devices", method: .post, headers: .bearer(token), body: body)
                expectError(tooLarge, .contentTooLarge, "payload_too_large")
                var headers = HTTPFields.bearer(token)
                headers[HTTPField.Name("X-Padding")!] = String(repeating: "p", count: 40 * 1024)
                // The decoder refuses it before routing, on any path (this one is outside the contract, so the
                // contract check does not ask for a documented body).
                let refused = try? await client.execute(uri: "/any/path", method: .get, headers: headers)
                #expect(refused == nil || refused!.status.code >= 400, "a 40 KiB header is refused (status or closed connection)")
            }
        }
    }
}
