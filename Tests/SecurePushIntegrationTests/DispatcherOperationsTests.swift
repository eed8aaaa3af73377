import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SecurePushTestSupport
import Testing

@Suite("A dispatcher-only process serves the operations routes")
struct DispatcherOperationsTests {
    static func get(_ port: Int, _ path: String) async throws -> (status: UInt, body: String) {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)"), timeout: .seconds(5))
        return (response.status.code, String(buffer: try await response.body.collect(upTo: 1 << 20)))
    }

    @Test("health, readiness, status and its own delivery metrics, without a user-token key; no API route")
    func operations() async throws {
        try await TestDatabase.with { db in
            let outbox = FileManager.default.temporaryDirectory.appendingPathComponent("securepush-ops-\(UUID()).jsonl")
            defer { try? FileManager.default.removeItem(at: outbox) }
            let environment = ["SECUREPUSH_PROVIDERS": "simulated", "SECUREPUSH_SIMULATED_OUTBOX": outbox.path]
            try await withServedAPI(db, role: "dispatcher", environment: environment) { port in
                try await eventually("the dispatcher's /healthz answers", timeout: .seconds(30)) {
                    (try? await Self.get(port, "/healthz"))?.status == 200
                }
                #expect(try await Self.get(port, "/readyz").status == 200)
                _ = try await db.insertDevice(user: "ops", token: "ops-1")
                _ = try await db.enqueue(user: "ops", payload: #"{"title":"OPS-PAYLOAD"}"#)
                try await eventually("/metrics counts the push this process sent", timeout: .seconds(30)) {
                    let metrics = try await Self.get(port, "/metrics").body
                    return metrics.contains(#"securepush_deliveries_total{outcome="sent"} 1"#)
                }
                let metrics = try await Self.get(port, "/metrics").body
                #expect(!metrics.contains("OPS-PAYLOAD") && !metrics.contains("ops-1"))
                let status = try await Self.get(port, "/status")
                #expect(status.status == 200)
                let report = try JSONSerialization.jsonObject(with: Data(status.body.utf8)) as? [String: Any]
                let dispatchers = report?["dispatchers"] as? [[String: Any]] ?? []
                #expect(dispatchers.contains { $0["role"] as? String == "dispatcher" && $0["state"] as? String == "alive" })
                // The LISTEN connection's state comes with the heartbeat.
                try await eventually("/status shows the listener connected", timeout: .seconds(30)) {
                    let body = try await Self.get(port, "/status").body
                    let report = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
                    let rows = report?["dispatchers"] as? [[String: Any]] ?? []
                    return rows.contains { $0["listener_connected"] as? Bool == true && $0["listener_heard_at"] is String }
                }
                #expect(try await Self.get(port, "/status.html").body.contains("connected, heard"))
                for path in ["/v1/notifications", "/v1/webpush/key", "/openapi.json"] {
                    #expect(try await Self.get(port, path).status == 404, "\(path) is the API's, not the dispatcher's")
                }
            }
        }
    }
}
