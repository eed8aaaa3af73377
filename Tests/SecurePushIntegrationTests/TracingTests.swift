import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationEssentialsCompat
import NIOHTTP1
import PostgresNIO
import SecurePushFakes
import SecurePushTestSupport
import Testing

/// Traces (issue 36) against the real binary: the producer's traceparent reaches the claim, the pushes and the
/// fetch in the spans an OTLP/HTTP collector stand-in receives, while the platforms see no trace header.
@Suite("Traces")
struct TracingTests {
    /// An OTLP/HTTP (JSON) collector stand-in: keeps every span it is sent.
    final class Collector: Sendable {
        /// Each span received, as JSON.
        let received = NIOLockedValueBox<[Data]>([])

        var spans: [[String: Any]] {
            received.withLockedValue { $0 }.compactMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        }

        func receive(_ request: Request) async throws -> Response {
            let body = try await request.body.collect(upTo: 16 << 20)
            let object = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any] ?? [:]
            var received: [[String: Any]] = []
            for resource in object["resourceSpans"] as? [[String: Any]] ?? [] {
                for scope in resource["scopeSpans"] as? [[String: Any]] ?? [] {
                    received += scope["spans"] as? [[String: Any]] ?? []
                }
            }
            let encoded = try received.map { try JSONSerialization.data(withJSONObject: $0) }
            self.received.withLockedValue { $0 += encoded }
            return Response(status: .ok)
        }

        func named(_ name: String) -> [[String: Any]] {
            spans.filter { $0["name"] as? String == name }
        }
    }

    /// An id as lower-case hex, whether the exporter wrote hex (the OTLP/JSON rule) or base64.
    static func hex(_ value: Any?) -> String {
        guard let text = value as? String else { return "" }
        if text.range(of: "^[0-9a-fA-F]+$", options: .regularExpression) != nil { return text.lowercased() }
        return Data(base64Encoded: text).map { $0.map { String(format: "%02x", $0) }.joined() } ?? text
    }

    static func links(_ span: [String: Any]) -> [(trace: String, span: String)] {
        (span["links"] as? [[String: Any]] ?? []).map { (hex($0["traceId"]), hex($0["spanId"])) }
    }

    static func attributes(_ span: [String: Any]) -> [String: String] {
        var result: [String: String] = [:]
        for attribute in span["attributes"] as? [[String: Any]] ?? [] {
            guard let key = attribute["key"] as? String, let value = attribute["value"] as? [String: Any] else { continue }
            result[key] = value.values.first.map { "\($0)" } ?? ""
        }
        return result
    }

    @Test(
        "with SECUREPUSH_OTEL_ENDPOINT the claim, each push and the fetch link to the producer's traceparent; APNs and Web Push saw no trace header")
    func tracesFollowTheProducer() async throws {
        let collector = Collector()
        let router = Router()
        router.post("/v1/traces") { request, _ in try await collector.receive(request) }
        try await Application(router: router).test(.live) { otlp in
            try await TestDatabase.with { db in
                try await FakePushServices.with { platforms in
                    var environment = platforms.settings
                    environment["SECUREPUSH_PROVIDERS"] = "apns,webpush"
                    environment["SECUREPUSH_OTEL_ENDPOINT"] = "http://127.0.0.1:\(try #require(otlp.port))"
                    environment["SECUREPUSH_OTEL_PROTOCOL"] = "http/json"
                    environment["OTEL_BSP_SCHEDULE_DELAY"] = "200"
                    let log = FileManager.default.temporaryDirectory.appendingPathComponent("securepush-tracing-\(UUID()).log")
                    defer { try? FileManager.default.removeItem(at: log) }
                    try await withServedAPI(db, role: "all", environment: environment, logFile: log) { port in
                        let token = String((0..<64).map { _ in "0123456789abcdef".randomElement()! })
                        let rows = try await db.client.query(
                            """
                            SELECT device_id, device_secret FROM securepush.register_device(user_id => 'tia', platform => 'apns', token => \(token),
                                options => '{"environment":"sandbox"}')
                            """, logger: db.logger
                        ).collect()
                        let (phone, secret) = try #require(rows.first).decode((UUID, String).self)
                        let subscription = platforms.webPush.subscribe()
                        _ = try await db.insertDevice(
                            user: "tia", platform: "webpush", token: subscription.endpoint,
                            options: #"{"p256dh":"\#(subscription.p256dh)","auth":"\#(subscription.auth)"}"#)
                        let traceID = (0..<32).map { _ in "0123456789abcdef".randomElement()! }
                        let parentID = (0..<16).map { _ in "0123456789abcdef".randomElement()! }
                        let traceparent = "00-\(String(traceID))-\(String(parentID))-01"
                        let id: UUID = try await db.client.withConnection { producer in
                            try await producer.query("BEGIN", logger: db.logger)
                            try await producer.query("SELECT set_config('securepush.traceparent', \(traceparent), true)", logger: db.logger)
                            let rows = try await producer.query(
                                "INSERT INTO securepush.notifications (user_id, payload) VALUES ('tia', '{\"m\":\"TRACE-PAYLOAD\"}') RETURNING id",
                                logger: db.logger
                            ).collect()
                            try await producer.query("COMMIT", logger: db.logger)
                            return try #require(rows.first).decode(UUID.self)
                        }
                        let stored: String? = try await db.scalar("SELECT traceparent FROM securepush.notifications WHERE id = \(id)")
                        #expect(stored == traceparent)
                        try await eventually("both pushes accepted", timeout: .seconds(30)) {
                            let sent: Int64 = try await db.scalar(
                                "SELECT count(*)::bigint FROM securepush.delivery_log WHERE notification_id = \(id) AND outcome = 'sent'")
                            return sent == 2
                        }
                        var fetch = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/notifications/\(id)")
                        fetch.headers.add(name: "Authorization", value: "Bearer \(phone.uuidString.lowercased()).\(secret)")
                        #expect(try await HTTPClient.shared.execute(fetch, timeout: .seconds(10)).status == .ok)

                        do {
                            try await eventually("the collector has the claim, both pushes and the fetch", timeout: .seconds(30)) {
                                !collector.named("securepush.claim").isEmpty && collector.named("securepush.push").count == 2
                                    && !collector.named("securepush.fetch").isEmpty
                            }
                        } catch {
                            let names = collector.spans.map { $0["name"] as? String ?? "?" }
                            let log = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                            Issue.record("spans received: \(names); the server's log: \(log.suffix(3000))")
                            throw error
                        }
                        let trace = String(traceID)
                        let parent = String(parentID)
                        let claims = collector.named("securepush.claim")
                        #expect(
                            claims.contains { Self.links($0).contains { $0.trace == trace && $0.span == parent } }, "the claim links the producer")
                        let pushes = collector.named("securepush.push")
                        for push in pushes {
                            #expect(Self.hex(push["traceId"]) == trace, "a push continues the producer's trace")
                            #expect(Self.hex(push["parentSpanId"]) == parent)
                            #expect(Self.attributes(push)["securepush.outcome"] == "sent")
                        }
                        #expect(Set(pushes.compactMap { Self.attributes($0)["securepush.platform"] }) == ["apns", "webpush"])
                        let fetches = collector.named("securepush.fetch")
                        #expect(
                            fetches.contains { Self.links($0).contains { $0.trace == trace && $0.span == parent } }, "the fetch links the producer")
                        let everything = collector.received.withLockedValue { $0.map { String(decoding: $0, as: UTF8.self) }.joined() }
                        for forbidden in ["TRACE-PAYLOAD", "\"tia\"", token, secret, subscription.auth] {
                            #expect(!everything.contains(forbidden), "no payload, user id, token or secret in a span: \(forbidden)")
                        }
                        for request in platforms.apns.requests + platforms.webPush.requests {
                            #expect(request.header("traceparent") == nil && request.header("tracestate") == nil, "no trace header to a platform")
                        }
                        #expect(!platforms.apns.requests.isEmpty && !platforms.webPush.requests.isEmpty)
                        let purged: Int32 = try await db.scalar("SELECT securepush.purge_payloads(interval '0 seconds')")
                        #expect(purged >= 1)
                        let kept: String? = try await db.scalar("SELECT traceparent FROM securepush.notifications WHERE id = \(id)")
                        #expect(kept == nil, "the traceparent is purged with the payload")
                    }
                }
            }
        }
    }

    @Test("a traceparent is taken only when well formed (W3C version 00, no all-zero ids); without one nothing is stored")
    func traceparentIsValidated() async throws {
        try await TestDatabase.with { db in
            let valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
            let cases: [(String?, String?)] = [
                (valid, valid), (nil, nil), ("garbage", nil), ("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", nil),
                ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", nil), ("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", nil),
                ("00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01", nil),
            ]
            for (setting, expected) in cases {
                let stored: String? = try await db.client.withConnection { connection in
                    try await connection.query("BEGIN", logger: db.logger)
                    if let setting {
                        try await connection.query("SELECT set_config('securepush.traceparent', \(setting), true)", logger: db.logger)
                    }
                    let id = try await connection.query("SELECT securepush.enqueue(user_id => 'ty', payload => '{}'::jsonb)", logger: db.logger)
                        .collect().first?.decode(UUID.self)
                    let rows = try await connection.query("SELECT traceparent FROM securepush.notifications WHERE id = \(id)", logger: db.logger)
                        .collect()
                    try await connection.query("COMMIT", logger: db.logger)
                    return try rows.first?.decode(String?.self)
                }
                #expect(stored == expected, "\(setting ?? "no setting")")
            }
        }
    }
}
