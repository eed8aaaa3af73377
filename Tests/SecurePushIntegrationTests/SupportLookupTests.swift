import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PostgresNIO
import SecurePushStore
import SecurePushTestSupport
import Testing

/// The support lookup (issue 36): a notification's fate explained, also when nothing was pushed, on the operations
/// listener behind the operations token, and by `securepush trace`.
@Suite("Support lookup")
struct SupportLookupTests {
    static let token = "support-token-0123456789abcdef-0123"

    static func get(_ port: Int, _ path: String, token: String?) async throws -> (status: UInt, body: String) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        return (response.status.code, String(buffer: try await response.body.collect(upTo: 1 << 20)))
    }

    static func explanation(_ body: String) throws -> [String] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        return try #require(object["explanation"] as? [String])
    }

    @Test("each fate is named: unknown id, muted category, no device, a platform no dispatcher pushes, accepted and fetched; the token guards it")
    func explainsEveryFate() async throws {
        try await TestDatabase.with { db in
            let opsPort = freeTCPPort()
            let outbox = FileManager.default.temporaryDirectory.appendingPathComponent("securepush-support-\(UUID()).jsonl")
            defer { try? FileManager.default.removeItem(at: outbox) }
            let environment = [
                "SECUREPUSH_OPS_HOST": "127.0.0.1", "SECUREPUSH_OPS_PORT": "\(opsPort)", "SECUREPUSH_OPS_TOKEN": Self.token,
                "SECUREPUSH_PROVIDERS": "simulated", "SECUREPUSH_SIMULATED_OUTBOX": outbox.path,
            ]
            try await withServedAPI(db, role: "all", environment: environment) { port in
                try await eventually("the operations listener answers", timeout: .seconds(30)) {
                    (try? await Self.get(opsPort, "/healthz", token: nil))?.status == 200
                }
                try await eventually("the dispatcher says what it pushes", timeout: .seconds(30)) {
                    let known: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.dispatchers WHERE 'simulated' = ANY (platforms)")
                    return known > 0
                }
                // Accepted and fetched.
                _ = try await db.insertDevice(user: "ann", token: "ann-phone")
                let sent = try await db.enqueue(user: "ann", payload: #"{"title":"SUPPORT-PAYLOAD"}"#)
                try await eventually("pushed", timeout: .seconds(30)) {
                    let n: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.delivery_log WHERE notification_id = \(sent)")
                    return n == 1
                }
                // Muted: the user muted the category before.
                _ = try await db.insertDevice(user: "bob", token: "bob-phone")
                try await db.execute("INSERT INTO securepush.category_mutes (user_id, category) VALUES ('bob', 'promotions')")
                let muted: UUID = try await db.scalar(
                    "SELECT securepush.enqueue(user_id => 'bob', payload => '{}'::jsonb, category => 'promotions')")
                // No device at all.
                let orphan = try await db.enqueue(user: "nobody", payload: "{}")
                // A platform no dispatcher pushes (this one pushes simulated only).
                _ = try await db.insertDevice(user: "cid", platform: "fcm", token: "cid-fcm-registration-token-0123456789")
                let stranded = try await db.enqueue(user: "cid", payload: "{}")
                try await db.fanOut()

                #expect(try await Self.get(opsPort, "/support/notifications/\(sent)", token: nil).status == 401)
                #expect(try await Self.get(opsPort, "/support/notifications/\(sent)", token: "wrong-token-0123456789abcdef").status == 401)
                // Guessing is throttled (issue 47): past the free failures (5 per address and for the token itself),
                // 429; the valid token is still served while the guesses are blocked.
                var statuses: [UInt] = []
                for attempt in 0..<5 {
                    statuses.append(try await Self.get(opsPort, "/support/notifications/\(sent)", token: "wrong-\(attempt)-0123456789abcdef").status)
                }
                #expect(statuses == [401, 401, 401, 429, 429], "\(statuses)")
                #expect(try await Self.get(opsPort, "/support/notifications/\(sent)", token: Self.token).status == 200)
                #expect(try await Self.get(port, "/support/notifications/\(sent)", token: Self.token).status == 404, "not on the API port")

                let answer = try await Self.get(opsPort, "/support/notifications/\(sent)", token: Self.token)
                #expect(answer.status == 200)
                #expect(!answer.body.contains("SUPPORT-PAYLOAD"), "never the payload")
                #expect(!answer.body.contains("ann-phone"), "never the token")
                let lines = try Self.explanation(answer.body)
                #expect(lines.contains { $0.contains("accepted by simulated") }, "\(lines)")
                #expect(lines.contains { $0.contains("not fetched") }, "\(lines)")

                let cases: [(UUID, String)] = [
                    (UUID(), "No notification with this id"), (muted, "had muted category promotions"), (orphan, "no registered device"),
                    (stranded, "no live dispatcher pushes fcm"),
                ]
                for (id, phrase) in cases {
                    let lines = try Self.explanation(try await Self.get(opsPort, "/support/notifications/\(id)", token: Self.token).body)
                    #expect(lines.contains { $0.contains(phrase) }, "\(phrase): \(lines)")
                }

                let device: UUID = try await db.scalar("SELECT id FROM securepush.devices WHERE user_id = 'ann'")
                let history = try await Self.get(opsPort, "/support/devices/\(device)", token: Self.token)
                #expect(history.status == 200)
                #expect(!history.body.contains("ann-phone"))
                #expect(try Self.explanation(history.body).contains { $0.contains("fetched by the device") })

                // The terminal says the same.
                let cli = Process()
                cli.executableURL = try securepushExecutable()
                cli.arguments = ["trace", stranded.uuidString, "--database-url", db.url.urlString, "--log-level", "error"]
                let output = Pipe()
                cli.standardOutput = output
                cli.standardError = FileHandle.nullDevice
                try cli.run()
                let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                cli.waitUntilExit()
                #expect(cli.terminationStatus == 0)
                #expect(printed.contains("no live dispatcher pushes fcm"), "\(printed)")
            }
        }
    }
}
