import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationEssentialsCompat
import PostgresNIO
import SecurePushProviders
import SecurePushTestSupport
import Testing

/// The outcome webhook (issue 36) against the real binary: a receiver that refuses for a while then takes the
/// batches gets every event exactly as the table has them, in order, each request signed (Standard Webhooks).
@Suite("Outcome webhook")
struct WebhookTests {
    static let secretBytes = Data((0..<32).map { UInt8($0 &* 7 &+ 3) })
    static var secret: String { "whsec_" + secretBytes.base64EncodedString() }

    struct Received: Sendable {
        var id: String
        var timestamp: String
        var signature: String
        var body: Data
    }

    final class Receiver: Sendable {
        let refuseUntil: Date
        let state = NIOLockedValueBox<(refused: Int, taken: [Received])>((0, []))

        init(refuseFor seconds: TimeInterval) { refuseUntil = Date().addingTimeInterval(seconds) }

        func answer(_ request: Request) async throws -> Response {
            let body = try await request.body.collect(upTo: 1 << 20)
            if Date() < refuseUntil {
                state.withLockedValue { $0.refused += 1 }
                return Response(status: .internalServerError)
            }
            let received = Received(
                id: request.headers[HTTPField.Name("webhook-id")!] ?? "", timestamp: request.headers[HTTPField.Name("webhook-timestamp")!] ?? "",
                signature: request.headers[HTTPField.Name("webhook-signature")!] ?? "", body: Data(buffer: body))
            state.withLockedValue { $0.taken.append(received) }
            return Response(status: .noContent)
        }
    }

    @Test("a receiver that answers 500 for 5 s then 204 gets every event once taken, as the table has them, in order, validly signed")
    func receiverDownThenUp() async throws {
        let receiver = Receiver(refuseFor: 5)
        let router = Router()
        router.post("/hook") { request, _ in try await receiver.answer(request) }
        try await Application(router: router).test(.live) { http in
            try await TestDatabase.with { db in
                let outbox = FileManager.default.temporaryDirectory.appendingPathComponent("securepush-webhook-\(UUID()).jsonl")
                defer { try? FileManager.default.removeItem(at: outbox) }
                let environment = [
                    "SECUREPUSH_PROVIDERS": "simulated", "SECUREPUSH_SIMULATED_OUTBOX": outbox.path,
                    "SECUREPUSH_WEBHOOK_URL": "http://127.0.0.1:\(try #require(http.port))/hook", "SECUREPUSH_WEBHOOK_SECRET": Self.secret,
                    "SECUREPUSH_WEBHOOK_BATCH": "7", "SECUREPUSH_WEBHOOK_RETRY_MAX": "1s",
                ]
                let log = FileManager.default.temporaryDirectory.appendingPathComponent("securepush-webhook-\(UUID()).log")
                defer { try? FileManager.default.removeItem(at: log) }
                try await withServedAPI(db, role: "all", environment: environment.merging(["SECUREPUSH_LOG_LEVEL": "debug"]) { $1 }, logFile: log) {
                    _ in
                    do {
                        try await eventually("the webhook pinned its start", timeout: .seconds(30)) {
                            let rows: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.webhook_state")
                            return rows == 1
                        }
                        _ = try await db.insertDevice(user: "wes", token: "wes-phone")
                        _ = try await db.insertDevice(user: "wes", token: "\(SimulatedProvider.invalidTokenPrefix)wes-tablet")
                        for index in 0..<5 { _ = try await db.enqueue(user: "wes", payload: #"{"secret":"HOOK-PAYLOAD-\#(index)"}"#) }
                        // Every delivery ended (pushed, undelivered, or cancelled once the dead device was retired), then
                        // the receiver took as many events as the table holds.
                        try await eventually("every delivery ended", timeout: .seconds(60)) {
                            let waiting: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.deliveries")
                            let pushed: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.delivery_feed WHERE event = 'pushed'")
                            return waiting == 0 && pushed == 5
                        }
                        // Events, not feed rows: a delivery pushed at its fan-out is one row with two events (036).
                        let stored: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.events_after(NULL, 10000)")
                        try await eventually("every event was taken", timeout: .seconds(60)) {
                            let taken = try receiver.state.withLockedValue { state in
                                try state.taken.reduce(0) { $0 + (try Self.events($1.body).count) }
                            }
                            return taken >= stored
                        }
                        let (refused, taken) = receiver.state.withLockedValue { ($0.refused, $0.taken) }
                        #expect(refused >= 2, "the receiver refused while down: \(refused)")
                        var delivered: [[String: String]] = []
                        for request in taken {
                            var message = Data("\(request.id).\(request.timestamp).".utf8)
                            message.append(request.body)
                            let expected =
                                "v1,"
                                + Data(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Self.secretBytes)))
                                .base64EncodedString()
                            #expect(request.signature == expected, "signed with the shared secret")
                            #expect(abs((Double(request.timestamp) ?? 0) - Date().timeIntervalSince1970) < 120)
                            #expect(!String(decoding: request.body, as: UTF8.self).contains("HOOK-PAYLOAD"), "never a payload")
                            let events = try Self.events(request.body)
                            #expect(events.count <= 7)
                            delivered += events
                        }
                        let rows = try await db.client.query(
                            "SELECT cursor, notification_id::text, event, coalesce(detail, '') FROM securepush.events_after(NULL, 10000)",
                            logger: db.logger
                        ).collect()
                        var table: [[String: String]] = []
                        for row in rows {
                            let (cursor, notification, event, detail) = try row.decode((String, String, String, String).self)
                            table.append(["cursor": cursor, "notification_id": notification, "event": event, "detail": detail])
                        }
                        #expect(delivered == table, "exactly the table's events, in its order, each once")
                        let state: Int64 = try await db.scalar("SELECT delivered FROM securepush.webhook_state")
                        #expect(state == stored)
                        #expect(Set(table.map { $0["event"] ?? "" }).isSuperset(of: ["queued", "pushed", "undelivered"]), "\(table)")
                    } catch {
                        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                        let state: String =
                            (try? await db.scalar("SELECT coalesce((SELECT row_to_json(s)::text FROM securepush.webhook_state s), 'none')")) ?? "?"
                        let events: Int64 = (try? await db.scalar("SELECT count(*)::bigint FROM securepush.delivery_feed")) ?? -1
                        let taken = receiver.state.withLockedValue { "refused \($0.refused), took \($0.taken.count) requests" }
                        let lines = text.split(separator: "\n").filter { $0.contains("webhook") || $0.contains("error") }.suffix(20)
                        Issue.record(
                            "webhook_state \(state), \(events) events; the receiver \(taken); the server's log: \(lines.joined(separator: "\n"))")
                        throw error
                    }
                }
            }
        }
    }

    /// The events of a webhook body, each reduced to the fields compared with the table.
    static func events(_ body: Data) throws -> [[String: String]] {
        let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        let events = try #require(object["events"] as? [[String: Any]])
        return events.map { event in
            [
                "cursor": event["cursor"] as? String ?? "", "notification_id": event["notification_id"] as? String ?? "",
                "event": event["event"] as? String ?? "", "detail": event["detail"] as? String ?? "",
            ]
        }
    }
}
