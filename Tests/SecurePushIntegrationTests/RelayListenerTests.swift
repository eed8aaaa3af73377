import Foundation
import SecurePushCore
import SecurePushRelayProtocol
import SecurePushTestSupport
import Testing

/// The relay's listener against the real binary (issue 48, item 2): the API's connection guard, the request
/// head and the installation checked before the body, failed authentications throttled per address, and a
/// request rate per installation. Each client address is a loopback address of its own.
@Suite("Push relay: a listener that holds (real binary)", .serialized)
struct RelayListenerTests {
    static let environment = [
        "SECUREPUSH_MAX_CONNECTIONS_PER_ADDRESS": "50", "SECUREPUSH_HTTP_HEADER_TIMEOUT": "1s", "SECUREPUSH_HTTP_READ_TIMEOUT": "1s",
        "SECUREPUSH_RELAY_INSTALLATION_RATE": "5",
    ]

    /// A push request's bytes, signed as `installation` with `key`, for a token no installation bound.
    static func pushRequest(installation: UUID, key: InstallationKey) async throws -> (head: String, body: String) {
        let push = RelayPush(
            Push(
                notificationID: NotificationID(UUID()), target: PushTarget(deviceID: UUID(), platform: .apns, token: hexToken()),
                expiresAt: Date().addingTimeInterval(3600)))
        let body = try JSONEncoder().encode(RelayPushBatch(pushes: [push]))
        let token = try await RelayRequestToken.sign(installation: installation, key: key, method: "POST", path: "/v1/relay/pushes", body: body)
        let head =
            "POST /v1/relay/pushes HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\nAuthorization: Bearer \(token)\r\nContent-Length: \(body.count)\r\n\r\n"
        return (head, String(decoding: body, as: UTF8.self))
    }

    /// Sends `text` on a new connection from `source`; the answer's first line and headers, or nil.
    static func exchange(_ port: Int, from source: String, _ text: String, within milliseconds: Int32 = 5_000) async throws -> String? {
        let connection = try RawHTTPConnection(port: port, from: source)
        defer { connection.close() }
        connection.send(text)
        return await connection.receive(within: milliseconds)
    }

    @Test("connections past the per-address cap are closed at once, a withheld head is cut off, and another address is served")
    func connectionGuard() async throws {
        try await RelayTests.withRelay(environment: Self.environment) { relay in
            let a = try await relay.add("hospital-a")
            let hog = try SocketHog(port: relay.port, count: 200, from: "127.0.0.7")
            let (open, closed) = try await offThePool { try hog.report() }
            #expect(open == 200)
            #expect(closed >= 140, "the relay closed the connections past 50 from one address at once: \(closed)")
            let withheld = try RawHTTPConnection(port: relay.port, from: "127.0.0.8")
            defer { withheld.close() }
            withheld.send("POST /v1/relay/pushes HTTP/1.1\r\n")
            #expect(await withheld.closedByPeer(within: 4_000), "a request head withheld is cut off at SECUREPUSH_HTTP_HEADER_TIMEOUT")
            let request = try await Self.pushRequest(installation: a.id, key: a.key)
            let answer = try await Self.exchange(relay.port, from: "127.0.0.9", request.head + request.body)
            #expect(answer?.hasPrefix("HTTP/1.1 200") == true, "another address's push is answered: \(answer ?? "nothing")")
            await offThePool { hog.stop() }
        }
    }

    @Test("the head and the installation are checked before the body; a body that does not arrive is 408")
    func headBeforeBody() async throws {
        try await RelayTests.withRelay(environment: Self.environment) { relay in
            let a = try await relay.add("hospital-a")
            // An installation no one has, its body withheld: refused at once, not after the body's timeout.
            let unknown = try await Self.pushRequest(installation: UUID(), key: InstallationKey())
            let started = ContinuousClock.now
            let refused = try await Self.exchange(relay.port, from: "127.0.0.10", unknown.head)
            #expect(refused?.hasPrefix("HTTP/1.1 401") == true, "\(refused ?? "nothing")")
            let garbage = "POST /v1/relay/pushes HTTP/1.1\r\nHost: relay\r\nAuthorization: Bearer x.y.z\r\nContent-Length: 1000000\r\n\r\n"
            let refusedToo = try await Self.exchange(relay.port, from: "127.0.0.10", garbage)
            #expect(refusedToo?.hasPrefix("HTTP/1.1 401") == true, "\(refusedToo ?? "nothing")")
            #expect(ContinuousClock.now - started < .milliseconds(900), "neither waited for a body")
            // A real installation's head, then a body that stops short: 408 at SECUREPUSH_HTTP_READ_TIMEOUT.
            let known = try await Self.pushRequest(installation: a.id, key: a.key)
            let slow = try await Self.exchange(relay.port, from: "127.0.0.11", known.head + known.body.prefix(10))
            #expect(slow?.hasPrefix("HTTP/1.1 408") == true, "\(slow ?? "nothing")")
        }
    }

    @Test("failed authentications are throttled per address (429 with Retry-After); other addresses and signed requests are not")
    func failureThrottle() async throws {
        try await RelayTests.withRelay(environment: Self.environment) { relay in
            let a = try await relay.add("hospital-a")
            let forged = try await Self.pushRequest(installation: a.id, key: InstallationKey())
            var statuses: [String] = []
            for _ in 0..<22 {
                let answer = try await Self.exchange(relay.port, from: "127.0.0.12", forged.head + forged.body)
                statuses.append(String(answer?.prefix(12) ?? "nothing"))
            }
            #expect(statuses.prefix(20).allSatisfy { $0 == "HTTP/1.1 401" }, "\(statuses)")
            #expect(statuses.suffix(2).allSatisfy { $0 == "HTTP/1.1 429" }, "\(statuses)")
            let throttled = try await Self.exchange(relay.port, from: "127.0.0.12", forged.head + forged.body)
            #expect(throttled?.contains("too_many_failures") == true && throttled?.lowercased().contains("retry-after:") == true)
            // Another address is not throttled; the forged requests took nothing of the installation's rate.
            let other = try await Self.exchange(relay.port, from: "127.0.0.13", forged.head + forged.body)
            #expect(other?.hasPrefix("HTTP/1.1 401") == true, "\(other ?? "nothing")")
            let signed = try await Self.pushRequest(installation: a.id, key: a.key)
            let served = try await Self.exchange(relay.port, from: "127.0.0.13", signed.head + signed.body)
            #expect(served?.hasPrefix("HTTP/1.1 200") == true, "\(served ?? "nothing")")
        }
    }

    @Test("an installation's requests past SECUREPUSH_RELAY_INSTALLATION_RATE answer 429; another installation's are served")
    func installationRate() async throws {
        try await RelayTests.withRelay(environment: Self.environment) { relay in
            let a = try await relay.add("busy")
            let b = try await relay.add("quiet")
            var answers: [(status: UInt, body: String, retryAfter: String?, token: String)] = []
            for _ in 0..<20 {
                answers.append(try await relay.post("/v1/relay/pushes", RelayPushBatch(pushes: []), as: a))
            }
            #expect(answers.filter { $0.status == 200 }.count >= 5, "a burst of 5 is served: \(answers.map(\.status))")
            let limited = try #require(answers.first { $0.status == 429 }, "past the rate: 429 (\(answers.map(\.status)))")
            #expect(limited.retryAfter != nil && limited.body.contains("request rate"), "\(limited.body)")
            #expect(try await relay.post("/v1/relay/pushes", RelayPushBatch(pushes: []), as: b).status == 200)
        }
    }
}
