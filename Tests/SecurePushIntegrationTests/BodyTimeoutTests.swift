import Foundation
import SecurePushTestSupport
import Testing

/// A request body that stops short is answered `408` at `SECUREPUSH_HTTP_READ_TIMEOUT`, through the real binary.
/// The read that timed out is cancelled and waited for before the answer goes out (`withDeadlineJoined`): once
/// the handler has answered, the server reads the same connection again, and a read still under way then was
/// the suspect of a 408 that never arrived (seen once, under load, on the relay's listener).
@Suite("HTTP API: a body that does not arrive")
struct BodyTimeoutTests {
    @Test("a body that stops short is answered 408, on many connections at once; the server serves on")
    func bodyTimeout() async throws {
        try await TestDatabase.with { db in
            try await withServedAPI(db, environment: ["SECUREPUSH_HTTP_READ_TIMEOUT": "500ms"]) { port in
                try await eventually("the server answers", timeout: .seconds(30)) {
                    guard let probe = try? RawHTTPConnection(port: port) else { return false }
                    defer { probe.close() }
                    probe.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                    return await probe.receive(within: 2_000)?.hasPrefix("HTTP/1.1 200") == true
                }
                let token = try await HostileInputTests.userToken("slow-sender")
                let head =
                    "POST /v1/devices HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"platform\""
                let answers = try await withThrowingTaskGroup(of: String?.self) { group in
                    for _ in 0..<20 {
                        group.addTask {
                            let connection = try RawHTTPConnection(port: port)
                            defer { connection.close() }
                            connection.send(head)
                            return await connection.receive(within: 10_000)
                        }
                    }
                    var answers: [String?] = []
                    for try await answer in group { answers.append(answer) }
                    return answers
                }
                let timedOut = answers.filter { $0?.hasPrefix("HTTP/1.1 408") == true }.count
                #expect(timedOut == 20, "\(answers.map { String(($0 ?? "nothing").prefix(40)) })")
                let after = try RawHTTPConnection(port: port)
                defer { after.close() }
                after.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                #expect(await after.receive(within: 5_000)?.hasPrefix("HTTP/1.1 200") == true, "the server serves on")
            }
        }
    }
}
