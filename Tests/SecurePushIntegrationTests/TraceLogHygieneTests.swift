import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOFoundationEssentialsCompat
import NIOHTTP1
import PostgresNIO
import SecurePushAPI
import SecurePushCore
import SecurePushPostgres
import SecurePushStore
import SecurePushTestSupport
import Testing

/// No password, device secret, user token, push token, sealing auth secret, payload or preview byte in the
/// output at any log level: the real binary at `trace` (sealed previews on), through registration, enqueue,
/// push and read, and the subcommands; nor in `/metrics` and `/status`.
@Suite("Logs hold no secret at trace")
struct TraceLogHygieneTests {
    static let password = "pw-LEAKCHECK-7f3a91"
    static let pushToken = "push-token-LEAKCHECK-55aa"
    static let payloadNeedle = "PAYLOAD-LEAKCHECK-31337"
    static let previewNeedle = "PREVIEW-LEAKCHECK-4242"

    /// `text`, its lowercase and uppercase hex, and its base64 (at each of the three alignments).
    static func forms(_ text: String) -> [String] {
        let bytes = Array(text.utf8)
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        let base64 = (0..<3).map { shift in
            // The needle inside a longer base64 text starts at one of three alignments: drop the partial quanta.
            let encoded = Data(Array(repeating: UInt8(ascii: "x"), count: shift) + bytes).base64EncodedString()
            let start = encoded.index(encoded.startIndex, offsetBy: shift == 0 ? 0 : 4)
            return String(encoded[start...].dropLast(4))
        }
        return [text, hex, hex.uppercased()] + base64.filter { $0.count >= 12 }
    }

    static func leaks(in output: String, secrets: [String: String]) -> [String] {
        secrets.flatMap { name, secret in forms(secret).filter { output.contains($0) }.map { "\(name) as \($0.prefix(24))…" } }
    }

    @Test(
        "serve --role all at trace: registration, enqueue, push and read leave no secret in the log, as text or JSON lines",
        arguments: ["text", "json"])
    func serveAtTrace(format: String) async throws {
        try await TestDatabase.with { db in
            var url = db.url
            url.password = Self.password
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("securepush-trace-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let log = directory.appendingPathComponent("serve.log")
            let outbox = directory.appendingPathComponent("outbox.jsonl")
            let environment = [
                "DATABASE_URL": url.urlString, "SECUREPUSH_LOG_LEVEL": "trace", "SECUREPUSH_PROVIDERS": "simulated",
                "SECUREPUSH_SIMULATED_OUTBOX": outbox.path, "SECUREPUSH_SEALED_PREVIEWS": "on", "SECUREPUSH_LOG_FORMAT": format,
            ]
            // The device's sealing key: its auth secret is a secret the server holds and must never write out.
            let sealPublic = P256.KeyAgreement.PrivateKey().publicKey.x963Representation.base64URLEncodedString
            let sealAuth = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64URLEncodedString
            let userToken = try await HostileInputTests.userToken("user-trace")
            var secrets: [String: String] = [
                "password": Self.password, "user token": userToken, "push token": Self.pushToken, "sealing auth secret": sealAuth,
            ]
            try await withServedAPI(db, role: "all", environment: environment, logFile: log) { port in
                try await eventually("the server answers", timeout: .seconds(30)) {
                    (try? await DispatcherOperationsTests.get(port, "/healthz"))?.status == 200
                }
                var register = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/devices")
                register.method = .POST
                register.headers.add(name: "Authorization", value: "Bearer \(userToken)")
                register.headers.add(name: "Content-Type", value: "application/json")
                register.body = .bytes(
                    ByteBuffer(
                        string:
                            #"{"platform":"simulated","token":"\#(Self.pushToken)","sealing_key":{"p256dh":"\#(sealPublic)","auth":"\#(sealAuth)"}}"#
                    ))
                let registered = try await HTTPClient.shared.execute(register, timeout: .seconds(10))
                #expect(registered.status == .created)
                let created = try JSONSerialization.jsonObject(with: Data(buffer: try await registered.body.collect(upTo: 1 << 16))) as? [String: Any]
                let deviceID = try #require(created?["device_id"] as? String)
                let deviceSecret = try #require(created?["device_secret"] as? String)
                secrets["device secret"] = deviceSecret
                let id: UUID = try await db.scalar(
                    """
                    SELECT securepush.enqueue('user-trace', \(#"{"secret":"\#(Self.payloadNeedle)"}"#)::jsonb,
                                              preview => \(#"{"title":"\#(Self.previewNeedle)"}"#)::jsonb)
                    """)
                try await eventually("the push went out", timeout: .seconds(30)) {
                    (try? String(contentsOf: outbox, encoding: .utf8))?.contains(id.uuidString.lowercased()) == true
                }
                let pushed = try String(contentsOf: outbox, encoding: .utf8)
                #expect(pushed.contains("secureSealed"), "the push carries the sealed preview")
                #expect(Self.leaks(in: pushed, secrets: ["preview": Self.previewNeedle, "payload": Self.payloadNeedle]).isEmpty)
                var read = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/notifications/\(id)")
                read.headers.add(name: "Authorization", value: "Bearer \(deviceID).\(deviceSecret)")
                let fetched = try await HTTPClient.shared.execute(read, timeout: .seconds(10))
                #expect(fetched.status == .ok)
                let body = String(buffer: try await fetched.body.collect(upTo: 1 << 16))
                #expect(body.contains(Self.payloadNeedle) && body.contains(Self.previewNeedle), "the read returned the payload and preview")
                // Another user takes the push token over: the re-bind is counted in /metrics.
                var rebind = register
                rebind.headers.replaceOrAdd(name: "Authorization", value: "Bearer \(try await HostileInputTests.userToken("user-taker"))")
                #expect(try await HTTPClient.shared.execute(rebind, timeout: .seconds(10)).status == .created)
                let metrics = try await DispatcherOperationsTests.get(port, "/metrics").body
                #expect(metrics.contains("securepush_device_rebinds_total 1"), "the re-bind counter")
                let sealedLine = metrics.split(separator: "\n").first {
                    $0.hasPrefix("securepush_sealed_pushes_total{") && $0.contains(#"platform="simulated""#) && $0.contains(#"preview="sealed""#)
                }
                #expect(sealedLine?.hasSuffix(" 1") == true, "one sealed push counted: \(sealedLine ?? "none")")
                let status = try await DispatcherOperationsTests.get(port, "/status").body
                let exposed = ["payload": Self.payloadNeedle, "preview": Self.previewNeedle, "sealing auth secret": sealAuth]
                #expect(
                    Self.leaks(in: metrics + status, secrets: exposed).isEmpty,
                    "/metrics or /status: \(Self.leaks(in: metrics + status, secrets: exposed))")
            }
            secrets["payload"] = Self.payloadNeedle
            secrets["preview"] = Self.previewNeedle
            let output = try String(contentsOf: log, encoding: .utf8)
            #expect(output.contains("trace") || output.contains("debug"), "the log was written at trace")
            #expect(output.count > 1000, "the log has content: \(output.count) characters")
            #expect(Self.leaks(in: output, secrets: secrets).isEmpty, "leaked: \(Self.leaks(in: output, secrets: secrets))")
            if format == "json" {
                let lines = output.split(separator: "\n")
                let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                #expect(objects.count == lines.count, "every line is one JSON object: \(lines.count - objects.count) are not")
                #expect(objects.allSatisfy { $0["level"] is String && $0["message"] is String && $0["time"] is String && $0["source"] is String })
                #expect(objects.contains { ($0["metadata"] as? [String: Any])?.isEmpty == false }, "metadata is kept as an object")
            }
        }
    }

    @Test("without a log level, commands print their answer alone: no connection line")
    func commandsPrintTheirAnswer() async throws {
        try await TestDatabase.with { db in
            let status = try await runSecurepush(["status"], environment: ["DATABASE_URL": db.url.urlString])
            #expect(status.status == 0)
            #expect(status.output.hasPrefix("health "), "the table first: \(status.output.prefix(200))")
            #expect(!status.output.contains("connected to the writable primary"))
            let json = try await runSecurepush(["status", "--json"], environment: ["DATABASE_URL": db.url.urlString])
            #expect((try? JSONSerialization.jsonObject(with: Data(json.output.utf8))) != nil, "the JSON alone: \(json.output.prefix(200))")
        }
    }

    @Test("migrate and status at trace print no password")
    func subcommandsAtTrace() async throws {
        try await TestDatabase.with { db in
            var url = db.url
            url.password = Self.password
            for arguments in [["migrate"], ["status"], ["status", "--json"], ["migrate", "--log-level", "trace"]] {
                let run = try await runSecurepush(arguments, environment: ["DATABASE_URL": url.urlString, "SECUREPUSH_LOG_LEVEL": "trace"])
                #expect(run.status == 0, "\(arguments): \(run.output.suffix(300))")
                #expect(Self.leaks(in: run.output, secrets: ["password": Self.password]).isEmpty, "\(arguments) leaked the password")
            }
        }
    }
}
