import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationEssentialsCompat
import NIOHTTP1
import PostgresNIO
import SecurePushClient
import SecurePushCore
import SecurePushFakes
import SecurePushRelayProtocol
import SecurePushTestSupport
import Testing

/// A self-hosted SecurePush server (the real binary, its own database) pushing APNs through a relay (the real
/// binary, another database) to the fake APNs: issue 33's self-hosted half.
@Suite("Self-hosted server through the relay (real binaries)", .serialized)
struct RelayEndToEndTests {
    struct SelfHosted: Sendable {
        let port: Int
        let db: TestDatabase

        /// Registers a device of `platform` (APNs by default) for `user` through the API; returns its id.
        func register(_ user: String, token: String, platform: String = "apns") async throws -> UUID {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/devices")
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer \(try await HostileInputTests.userToken(user))")
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: #"{"platform":"\#(platform)","token":"\#(token)"}"#))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 1 << 16)
            #expect(response.status == .created, "\(String(buffer: body))")
            let object = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
            return try #require((object?["device_id"] as? String).flatMap { UUID(uuidString: $0) })
        }

        func enqueue(_ user: String) async throws -> UUID {
            try await db.scalar("SELECT securepush.enqueue(user_id => \(user), payload => '{\"title\":\"Lab results ready\"}'::jsonb)")
        }
    }

    /// Runs a self-hosted server (role all) that pushes APNs through `relay` as `installation`.
    static func withSelfHosted(
        _ relay: RelayTests.Relay, _ installation: RelayTests.Installation, environment extra: [String: String] = [:], logFile: URL? = nil,
        _ body: @escaping @Sendable (SelfHosted) async throws -> Void
    ) async throws {
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("relay-installation-\(UUID()).key")
        try installation.key.text.write(to: keyFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: keyFile) }
        try await TestDatabase.with { db in
            let environment = [
                "SECUREPUSH_PROVIDERS": "relay", "SECUREPUSH_RELAY_PLATFORMS": relay.fcm == nil ? "apns" : "apns,fcm",
                "SECUREPUSH_RELAY_URL": "http://127.0.0.1:\(relay.port)",
                "SECUREPUSH_RELAY_INSTALLATION_ID": installation.id.uuidString.lowercased(), "SECUREPUSH_RELAY_KEY_FILE": keyFile.path,
                "SECUREPUSH_RETRY_BASE": "200ms", "SECUREPUSH_RETRY_MAX": "1s",
            ]
            try await withServedAPI(db, role: "all", environment: environment.merging(extra) { $1 }, logFile: logFile) { port in
                try await eventually("the self-hosted server answers", timeout: .seconds(30)) {
                    (try? await DispatcherOperationsTests.get(port, "/healthz"))?.status == 200
                }
                try await body(SelfHosted(port: port, db: db))
            }
        }
    }

    @Test("two self-hosted servers push their devices through one relay; a 410 retires the device on the right server; nothing leaks into the relay")
    func twoInstallations() async throws {
        try await RelayTests.withRelay { relay in
            let a = try await relay.add("hospital-a")
            let b = try await relay.add("hospital-b")
            let (tokenA, tokenB) = (hexToken(), hexToken())
            try await Self.withSelfHosted(relay, a) { serverA in
                try await Self.withSelfHosted(relay, b) { serverB in
                    let deviceA = try await serverA.register("alice", token: tokenA)
                    _ = try await serverB.register("bob", token: tokenB)
                    // B's user has an Android phone too: FCM through the same relay.
                    let fcmToken = "fcm-" + UUID().uuidString.lowercased()
                    _ = try await serverB.register("bob", token: fcmToken, platform: "fcm")
                    // Each registration reaches the relay through its server's queue.
                    try await serverA.db.eventually(
                        "A's registration handed over", timeout: .seconds(20), count: "SELECT count(*)::bigint FROM securepush.relay_outbox", is: 0)
                    try await serverB.db.eventually(
                        "B's registration handed over", timeout: .seconds(20), count: "SELECT count(*)::bigint FROM securepush.relay_outbox", is: 0)

                    let idA = try await serverA.enqueue("alice")
                    let idB = try await serverB.enqueue("bob")
                    try await eventually("both pushes reached APNs", timeout: .seconds(30)) {
                        let bodies = relay.apns.delivered.map { String(decoding: $0.body, as: UTF8.self) }
                        return bodies.contains { $0.contains(idA.uuidString.lowercased()) }
                            && bodies.contains { $0.contains(idB.uuidString.lowercased()) }
                    }
                    let fcm = try #require(relay.fcm)
                    try await eventually("B's push reached FCM", timeout: .seconds(30)) {
                        fcm.delivered.contains { String(decoding: $0.body, as: UTF8.self).contains(idB.uuidString.lowercased()) }
                    }
                    let toFCM = String(decoding: try #require(fcm.delivered.first).body, as: UTF8.self)
                    #expect(toFCM.contains(fcmToken) && !toFCM.contains("Lab results"), "id only at FCM: \(toFCM)")
                    let toA = try #require(relay.apns.delivered.first { $0.path.hasSuffix(tokenA) })
                    let bodyA = String(decoding: toA.body, as: UTF8.self)
                    #expect(!bodyA.contains("Lab results"), "no payload at APNs: \(bodyA)")

                    // APNs says A's token is dead: A's server retires the device; B's is untouched.
                    relay.apns.script(token: tokenA, .reject(status: 410, reason: "Unregistered"))
                    _ = try await serverA.enqueue("alice")
                    try await serverA.db.eventually(
                        "A's device retired", timeout: .seconds(30),
                        count: "SELECT count(*)::bigint FROM securepush.devices WHERE id = \(deviceA) AND NOT active", is: 1)
                    let bActive: Int64 = try await serverB.db.scalar("SELECT count(*)::bigint FROM securepush.devices WHERE active")
                    #expect(bActive == 2)

                    // Nothing of either server's content is in the relay's tables.
                    let dump: String = try await relay.db.scalar(
                        """
                        SELECT coalesce(string_agg(t, ' '), '') FROM (
                            SELECT row_to_json(b)::text AS t FROM securepush_relay.bindings b
                            UNION ALL SELECT row_to_json(i)::text FROM securepush_relay.installations i
                            UNION ALL SELECT row_to_json(a)::text FROM securepush_relay.audit a
                            UNION ALL SELECT row_to_json(u)::text FROM securepush_relay.usage u
                            UNION ALL SELECT row_to_json(r)::text FROM (
                                -- A request id is 22 random characters the server draws ("bob" turned up in one).
                                SELECT length(jti) AS jti_length, expires_at FROM securepush_relay.request_ids) r) rows
                        """)
                    for forbidden in [
                        "Lab results", "alice", "bob", tokenA, tokenB, fcmToken, deviceA.uuidString.lowercased(), idA.uuidString.lowercased(),
                    ] {
                        #expect(!dump.lowercased().contains(forbidden.lowercased()), "the relay's tables hold \(forbidden)")
                    }
                }
            }
        }
    }

    @Test(
        "the relay's refusals on the self-hosted side: a critical push the installation may not send fails and the device stays; a token the relay has not bound retires the device at its second refusal, not its first"
    )
    func refusals() async throws {
        try await RelayTests.withRelay { relay in
            let installation = try await relay.add("clinic")
            try await Self.withSelfHosted(relay, installation, environment: ["SECUREPUSH_CRITICAL_URGENCY": "on"]) { server in
                let device = try await server.register("kim", token: hexToken())
                try await server.db.eventually(
                    "the registration handed over", timeout: .seconds(20), count: "SELECT count(*)::bigint FROM securepush.relay_outbox", is: 0)
                @Sendable func outcome(_ id: UUID) async throws -> (outcome: String, attempts: Int32)? {
                    try await server.db.client.query(
                        "SELECT outcome, attempts FROM securepush.delivery_log WHERE notification_id = \(id)", logger: server.db.logger
                    ).collect().first?.decode((String, Int32).self)
                }
                @Sendable func active() async throws -> Bool {
                    try await server.db.scalar("SELECT active FROM securepush.devices WHERE id = \(device)")
                }
                // The installation may not send critical alerts (relay migration 007's default): that push fails.
                let critical: UUID = try await server.db.scalar(
                    "SELECT securepush.enqueue(user_id => 'kim', payload => '{\"t\":1}'::jsonb, urgency => 'critical')")
                try await eventually("the critical push answered", timeout: .seconds(30)) { try await outcome(critical) != nil }
                #expect(try await outcome(critical)?.outcome == "failed")
                #expect(try await active(), "a push the relay's policy refuses does not retire the device")
                // The binding gone at the relay while the server holds nothing to hand over: the first refusal may
                // have raced a handover, so it is retried; the second retires the device.
                try await relay.db.execute("DELETE FROM securepush_relay.bindings WHERE installation_id = \(installation.id)")
                let id = try await server.enqueue("kim")
                try await eventually("the unbound token's push answered", timeout: .seconds(30)) { try await outcome(id) != nil }
                let answered = try await outcome(id)
                #expect(answered?.outcome == "token_invalid" && answered?.attempts == 2, "\(String(describing: answered))")
                #expect(try await !active())
            }
        }
    }

    @Test("a phone signed in to two self-hosted servers gets both servers' pushes, before and after either releases its token (issue 48)")
    func oneTokenTwoServers() async throws {
        try await RelayTests.withRelay { relay in
            let a = try await relay.add("work")
            let b = try await relay.add("personal")
            let token = hexToken()
            try await Self.withSelfHosted(relay, a) { serverA in
                try await Self.withSelfHosted(relay, b) { serverB in
                    @Sendable func handedOver(_ server: SelfHosted, _ what: String) async throws {
                        try await server.db.eventually(
                            what, timeout: .seconds(20), count: "SELECT count(*)::bigint FROM securepush.relay_outbox", is: 0)
                    }
                    @Sendable func reachesAPNs(_ server: SelfHosted, _ user: String) async throws {
                        let id = try await server.enqueue(user)
                        try await eventually("\(user)'s push reached the phone", timeout: .seconds(30)) {
                            relay.apns.delivered.contains {
                                $0.path.hasSuffix(token) && String(decoding: $0.body, as: UTF8.self).contains(id.uuidString.lowercased())
                            }
                        }
                    }
                    @Sendable func bindings(_ installation: RelayTests.Installation) async throws -> Int64 {
                        try await relay.db.scalar("SELECT count(*)::bigint FROM securepush_relay.bindings WHERE installation_id = \(installation.id)")
                    }
                    // The same phone (one APNs token) signs in to both servers, as two users of theirs.
                    let deviceA = try await serverA.register("alice", token: token)
                    let deviceB = try await serverB.register("alice-home", token: token)
                    try await handedOver(serverA, "A's registration handed over")
                    try await handedOver(serverB, "B's registration handed over")
                    try await reachesAPNs(serverA, "alice")
                    try await reachesAPNs(serverB, "alice-home")

                    // Signed out of A: A's binding goes, B's stays and B's pushes still arrive.
                    _ = try await serverA.db.scalar("SELECT securepush.deactivate_device(\(deviceA))", as: Bool.self)
                    try await handedOver(serverA, "A's release handed over")
                    let (boundA, boundB) = (try await bindings(a), try await bindings(b))
                    #expect(boundA == 0 && boundB == 1)
                    try await reachesAPNs(serverB, "alice-home")

                    // Signed in to A again, then out of B: A's pushes arrive, and B's device was never retired.
                    _ = try await serverA.register("alice", token: token)
                    try await handedOver(serverA, "A's new registration handed over")
                    _ = try await serverB.db.scalar("SELECT securepush.deactivate_device(\(deviceB))", as: Bool.self)
                    try await handedOver(serverB, "B's release handed over")
                    let (rebound, released) = (try await bindings(a), try await bindings(b))
                    #expect(rebound == 1 && released == 0)
                    try await reachesAPNs(serverA, "alice")
                    let retired: Int64 = try await serverB.db.scalar(
                        "SELECT count(*)::bigint FROM securepush.devices WHERE NOT active AND deactivated_reason IS DISTINCT FROM 'unregistered'")
                    #expect(retired == 0, "B retired no device for a token A registered")
                }
            }
        }
    }

    @Test("a sealed preview travels through the relay as a sealed value of fixed size, opened by the device's key only")
    func sealedThroughTheRelay() async throws {
        try await RelayTests.withRelay { relay in
            let installation = try await relay.add("clinic")
            let token = hexToken()
            try await Self.withSelfHosted(relay, installation, environment: ["SECUREPUSH_SEALED_PREVIEWS": "on"]) { server in
                let device = try await server.register("carol", token: token)
                let key = SealingKey.generate()
                let sealPublic = ByteBuffer(bytes: try #require(Data(base64URLEncoded: key.publicKeyBase64URL)))
                let sealAuth = ByteBuffer(bytes: try #require(Data(base64URLEncoded: key.authBase64URL)))
                let set: Bool = try await server.db.scalar("SELECT securepush.set_sealing_key(\(device), \(sealPublic)::bytea, \(sealAuth)::bytea)")
                #expect(set)
                try await server.db.eventually(
                    "registration handed over", timeout: .seconds(20), count: "SELECT count(*)::bigint FROM securepush.relay_outbox", is: 0)
                let id: UUID = try await server.db.scalar(
                    #"SELECT securepush.enqueue('carol', '{"secret":"x"}'::jsonb, preview => '{"title":"Appointment","body":"Tomorrow 9:00 with Dr. Lee"}'::jsonb)"#
                )
                try await eventually("the sealed push reached APNs", timeout: .seconds(30)) {
                    relay.apns.delivered.contains { $0.path.hasSuffix(token) }
                }
                let request = try #require(relay.apns.delivered.first { $0.path.hasSuffix(token) })
                let text = String(decoding: request.body, as: UTF8.self)
                #expect(!text.contains("Appointment") && !text.contains("Dr. Lee"), "no preview in clear at APNs")
                let userInfo = try #require(try JSONSerialization.jsonObject(with: request.body) as? [String: Any])
                #expect((userInfo["secureSealed"] as? String)?.count == 1503, "the fixed size of every sealed value")
                guard case .sealed(let pushedID, let sealed)? = PushMessage(apnsUserInfo: userInfo) else {
                    Issue.record("the relayed push is not sealed: \(text)")
                    return
                }
                #expect(pushedID == id)
                let opened = try sealed.open(with: key)
                #expect(opened.title == "Appointment" && opened.body == "Tomorrow 9:00 with Dr. Lee")
                #expect(throws: SealedPushError.self) { try sealed.open(with: SealingKey.generate()) }
            }
        }
    }

    /// Runs `securepush serve --role relay` with `environment` until `body` returns (then SIGTERM), once it answers.
    static func withRelayProcess(_ environment: [String: String], port: Int, _ body: (Process) async throws -> Void) async throws {
        let process = Process()
        process.executableURL = try securepushExecutable()
        process.arguments = ["serve", "--role", "relay"]
        process.environment = ["PATH": "/usr/bin:/bin", "SECUREPUSH_LOG_LEVEL": "error"].merging(environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
        try await eventually("the relay answers", timeout: .seconds(30)) {
            (try? await DispatcherOperationsTests.get(port, "/healthz"))?.status == 200
        }
        // Without an operations listener, the relay's port has the probes but never lists installations (issue 48).
        for path in ["/status", "/metrics"] {
            #expect(try await DispatcherOperationsTests.get(port, path).status == 404, "\(path) on the relay's own port")
        }
        try await body(process)
    }

    @Test(
        "registrations succeed while the relay is down; a relay killed mid-load loses nothing: every committed notification is pushed once it is back"
    )
    func relayOutage() async throws {
        let tokenKey = FileManager.default.temporaryDirectory.appendingPathComponent("relay-token-key-\(UUID())")
        defer { try? FileManager.default.removeItem(at: tokenKey) }
        try await RelayTests.withAPNs { apns, apnsSettings in
            try await TestDatabase.with { relayDB in
                let port = freeTCPPort()
                let environment = try await RelayTests.prepare(relayDB, apnsSettings: apnsSettings, port: port, tokenKey: tokenKey)
                let relay = RelayTests.Relay(port: port, db: relayDB, apns: apns, environment: environment)
                let installation = try await relay.add("outage")
                let settings = ["SECUREPUSH_MAX_ATTEMPTS": "100", "SECUREPUSH_CIRCUIT_MAX_OPEN": "1s"]
                try await Self.withSelfHosted(relay, installation, environment: settings) { server in
                    @Sendable func pushed(_ id: UUID) -> Bool {
                        let needle = id.uuidString.lowercased()
                        return apns.delivered.contains { String(decoding: $0.body, as: UTF8.self).contains(needle) }
                    }
                    // The relay is down: registrations still succeed, and wait in the queue with the first notification.
                    let tokens = (0..<10).map { _ in hexToken() }
                    for (index, token) in tokens.enumerated() { _ = try await server.register("user-\(index)", token: token) }
                    let first = try await server.enqueue("user-0")
                    let queued: Int64 = try await server.db.scalar("SELECT count(*)::bigint FROM securepush.relay_outbox")
                    #expect(queued == 10, "every registration waits for the relay")
                    #expect(!pushed(first))

                    var ids: [UUID] = []
                    try await Self.withRelayProcess(environment, port: port) { process in
                        try await eventually("the first notification pushed once the relay is up", timeout: .seconds(30)) { pushed(first) }
                        // 3,000 at once (one statement), so the relay is killed well before they are all out.
                        ids = try await server.db.client.query(
                            """
                            INSERT INTO securepush.notifications (user_id, payload)
                            SELECT 'user-' || (g % 10), '{"n":1}' FROM generate_series(1, 3000) g RETURNING id
                            """, logger: server.db.logger
                        ).collect().map { try $0.decode(UUID.self) }
                        try await eventually("part of the load pushed", timeout: .seconds(30)) { apns.delivered.count >= 60 }
                        kill(process.processIdentifier, SIGKILL)
                        process.waitUntilExit()
                    }
                    let pushedBefore = Set(apns.delivered.compactMap { Self.notificationID(in: $0.body) })
                    let before = ids.filter(pushedBefore.contains).count
                    #expect(before < ids.count, "the relay was killed mid-load (\(before) of \(ids.count) pushed)")
                    try await Self.withRelayProcess(environment, port: port) { _ in
                        let all = ids
                        try await eventually("every committed notification pushed", timeout: .seconds(120)) {
                            let delivered = Set(apns.delivered.compactMap { Self.notificationID(in: $0.body) })
                            return all.allSatisfy(delivered.contains)
                        }
                    }
                    let lost: Int64 = try await server.db.scalar(
                        "SELECT count(*)::bigint FROM securepush.delivery_log WHERE outcome <> 'sent'")
                    #expect(lost == 0, "no delivery failed or was dropped")
                }
            }
        }
    }

    @Test("the relay's and the self-hosted server's logs at trace hold no key, token, request token, payload, preview or sealed value")
    func traceLogs() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relay-trace-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (relayLog, serverLog) = (directory.appendingPathComponent("relay.log"), directory.appendingPathComponent("server.log"))
        let token = hexToken()
        let trace = ["SECUREPUSH_LOG_LEVEL": "trace"]
        let found = NIOLockedValueBox<[String]>([token, "Bearer ", "Lab results", "Dr. Lee", "secureSealed"])
        try await RelayTests.withRelay(environment: trace, logFile: relayLog) { relay in
            let installation = try await relay.add("traced")
            found.withLockedValue { $0 += [installation.key.text, String(installation.key.text.dropFirst("securepush-relay-key-1:".count))] }
            try await Self.withSelfHosted(
                relay, installation, environment: trace.merging(["SECUREPUSH_SEALED_PREVIEWS": "on"]) { $1 }, logFile: serverLog
            ) {
                server in
                let device = try await server.register("dora", token: token)
                let key = SealingKey.generate()
                let sealPublic = ByteBuffer(bytes: try #require(Data(base64URLEncoded: key.publicKeyBase64URL)))
                let sealAuth = ByteBuffer(bytes: try #require(Data(base64URLEncoded: key.authBase64URL)))
                let _: Bool = try await server.db.scalar("SELECT securepush.set_sealing_key(\(device), \(sealPublic)::bytea, \(sealAuth)::bytea)")
                try await server.db.eventually(
                    "registration handed over", timeout: .seconds(20), count: "SELECT count(*)::bigint FROM securepush.relay_outbox", is: 0)
                _ =
                    try await server.db.scalar(
                        #"SELECT securepush.enqueue('dora', '{"title":"Lab results"}'::jsonb, preview => '{"body":"Dr. Lee"}'::jsonb)"#) as UUID
                try await eventually("pushed", timeout: .seconds(30)) { relay.apns.delivered.contains { $0.path.hasSuffix(token) } }
                let request = try #require(relay.apns.delivered.first { $0.path.hasSuffix(token) })
                let userInfo = try #require(try JSONSerialization.jsonObject(with: request.body) as? [String: Any])
                let sealed = try #require(userInfo["secureSealed"] as? String)
                found.withLockedValue { $0.append(sealed) }
            }
        }
        let forbidden = found.withLockedValue { $0 }
        for (name, log) in [("relay", relayLog), ("self-hosted server", serverLog)] {
            let text = try String(contentsOf: log, encoding: .utf8)
            #expect(text.contains("trace") || text.contains("debug"), "the \(name) logged at trace")
            for needle in forbidden {
                #expect(!text.contains(needle), "the \(name)'s log holds \(needle.prefix(24))…")
            }
        }
    }

    /// The notification id an APNs body announces (`secureId`).
    static func notificationID(in body: Data) -> UUID? {
        (try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["secureId"].flatMap { $0 as? String }.flatMap { UUID(uuidString: $0) }
    }
}
