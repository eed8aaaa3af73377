import AsyncHTTPClient
import Foundation
import SecurePushAPI
import SecurePushStore
import SecurePushTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The attacks of the second security round, repeated against the real binary.
@Suite("Security round two: connections, operations listener, hostile transfer encodings")
struct HostileInputTests {
    static let healthz = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

    static func waitUntilServing(_ port: Int, from source: String? = nil) async throws {
        try await eventually("the server answers /healthz", timeout: .seconds(30)) {
            guard let probe = try? RawHTTPConnection(port: port, from: source) else { return false }
            defer { probe.close() }
            probe.send(healthz)
            return await probe.receive(within: 2_000)?.hasPrefix("HTTP/1.1 200") == true
        }
    }

    @Test("2,000 idle sockets from one address: another address's /healthz and device read answer within a second")
    func idleSocketsFromOneAddress() async throws {
        try await TestDatabase.with { db in
            let device = try await db.insertDevice(user: "nat", token: "nat-1")
            _ = device
            try await withServedAPI(db) { port in
                try await Self.waitUntilServing(port)
                // The sockets are held by a child process: 2,000 descriptors in the test process itself would
                // break Foundation's Process.run in concurrently running tests (it copies descriptor sets).
                let hog = try SocketHog(port: port, count: 2000, from: "127.0.0.1")

                let (open, closed) = try await offThePool { try hog.report() }
                #expect(open == 2000, "the hog connected all its sockets")
                #expect(closed >= 900, "the server closed the sockets beyond the per-address limit at once: \(closed)")
                let started = ContinuousClock.now
                let other = try RawHTTPConnection(port: port, from: "127.0.0.2")
                defer { other.close() }
                other.send(Self.healthz)
                let answer = await other.receive(within: 1_000)
                #expect(answer?.hasPrefix("HTTP/1.1 200") == true, "another address is served: \(answer ?? "no answer")")
                let read = try RawHTTPConnection(port: port, from: "127.0.0.3")
                defer { read.close() }
                read.send(
                    "GET /v1/notifications HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(UUID().uuidString.lowercased()).\(String(repeating: "A", count: 43))\r\n\r\n"
                )
                let readAnswer = await read.receive(within: 1_000)
                #expect(readAnswer?.hasPrefix("HTTP/1.1 401") == true, "a device read is answered: \(readAnswer ?? "no answer")")
                #expect(ContinuousClock.now - started < .seconds(2))
                await offThePool { hog.stop() }
            }
        }
    }

    @Test("a request head trickled or withheld is cut off at SECUREPUSH_HTTP_HEADER_TIMEOUT")
    func trickledHeaders() async throws {
        try await TestDatabase.with { db in
            try await withServedAPI(db, environment: ["SECUREPUSH_HTTP_HEADER_TIMEOUT": "1s"]) { port in
                try await Self.waitUntilServing(port)
                let trickle = try RawHTTPConnection(port: port)
                defer { trickle.close() }
                trickle.send("GET /healthz HTTP/1.1\r\n")
                let started = ContinuousClock.now
                var closed = false
                // One header byte every 200 ms: each byte would reset an idle timeout, not this deadline.
                for _ in 0..<25 where !closed {
                    trickle.send("X")
                    closed = await trickle.closedByPeer(within: 200)
                }
                #expect(closed, "the trickling connection was closed")
                #expect(ContinuousClock.now - started < .seconds(4))
                let idle = try RawHTTPConnection(port: port)
                defer { idle.close() }
                #expect(await idle.closedByPeer(within: 5_000), "a connection that sends nothing is closed")
                // An ordinary request on a fresh connection is served.
                try await Self.waitUntilServing(port)
            }
        }
    }

    @Test("a chunk size that overflows, and other broken chunked bodies, answer 400, never 500")
    func brokenChunkedBodies() async throws {
        try await TestDatabase.with { db in
            try await withServedAPI(db) { port in
                try await Self.waitUntilServing(port)
                let token = try await Self.userToken("chunky")
                let bodies = [
                    "ffffffffffffffffff\r\n{}\r\n0\r\n\r\n",
                    "-5\r\n{}\r\n0\r\n\r\n",
                    "zz\r\n{}\r\n0\r\n\r\n",
                    "2\r\n{}XX0\r\n\r\n",
                ]
                for body in bodies {
                    let connection = try RawHTTPConnection(port: port)
                    defer { connection.close() }
                    connection.send(
                        "POST /v1/devices HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nContent-Type: application/json\r\n"
                            + "Transfer-Encoding: chunked\r\n\r\n\(body)")
                    let answer = await connection.receive(within: 5_000) ?? ""
                    #expect(!answer.hasPrefix("HTTP/1.1 5"), "\(body.debugDescription): \(answer.prefix(80))")
                    #expect(answer.isEmpty || answer.hasPrefix("HTTP/1.1 4"), "\(body.debugDescription): \(answer.prefix(80))")
                }
                try await Self.waitUntilServing(port)
            }
        }
    }

    @Test("SECUREPUSH_OPS_PORT: the operations routes on their own listener; the API port answers 404 for them")
    func operationsListener() async throws {
        try await TestDatabase.with { db in
            let opsPort = freeTCPPort()
            try await withServedAPI(db, environment: ["SECUREPUSH_OPS_HOST": "127.0.0.1", "SECUREPUSH_OPS_PORT": "\(opsPort)"]) { port in
                try await eventually("the operations listener answers", timeout: .seconds(30)) {
                    (try? await DispatcherOperationsTests.get(opsPort, "/healthz"))?.status == 200
                }
                for path in ["/healthz", "/readyz", "/status", "/status.html", "/metrics"] {
                    #expect(try await DispatcherOperationsTests.get(opsPort, path).status == 200, "\(path) on the operations port")
                    let public_ = try await DispatcherOperationsTests.get(port, path)
                    #expect(public_.status == 404, "\(path) on the API port")
                    #expect(public_.body.contains("not_found"))
                }
                #expect(try await DispatcherOperationsTests.get(port, "/openapi.json").status == 200)
                #expect(try await DispatcherOperationsTests.get(opsPort, "/openapi.json").status == 404)
            }
        }
    }

    static func userToken(_ user: String) async throws -> String {
        let verifier = try await SecurePushAPI.UserTokenVerifier(key: .hs256(secret: APIHarness.jwtSecret), issuer: nil, audience: nil)
        return try await verifier.sign(.init(subject: user, expiresAt: Date().addingTimeInterval(600)))
    }
}

/// A child process (Python, standard library) that opens `count` idle TCP connections from one loopback
/// address and holds them until stopped; it reports how many connected and how many the server closed
/// within two seconds.
final class SocketHog: @unchecked Sendable {
    let process = Process()
    let input = Pipe()
    let output = Pipe()

    static let script = """
        import selectors, socket, sys, time
        port, count, source = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
        selector = selectors.DefaultSelector()
        socks = []
        for _ in range(count):
            s = socket.socket(); s.bind((source, 0)); s.connect(("127.0.0.1", port)); socks.append(s)
            selector.register(s, selectors.EVENT_READ)
        deadline = time.time() + 2.0
        closed = 0
        while time.time() < deadline:
            for key, _ in selector.select(timeout=0.1):
                try:
                    data = key.fileobj.recv(1)
                except OSError:
                    data = b""
                if data == b"":
                    selector.unregister(key.fileobj); closed += 1
        print(len(socks), closed, flush=True)
        sys.stdin.read()
        """

    init(port: Int, count: Int, from source: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script, "\(port)", "\(count)", source]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// `(connected, closed by the server)`, once the child has measured them.
    func report() throws -> (Int, Int) {
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw TestFailure("the socket hog ended early") }
            line.append(chunk)
        }
        let numbers = String(decoding: line, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Int($0) }
        guard numbers.count == 2 else { throw TestFailure("unexpected socket hog report") }
        return (numbers[0], numbers[1])
    }

    /// Ends the child (its standard input closes) and waits for it: blocking, so call it off the pool.
    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    deinit {
        // A test that failed before `stop`: closing its input ends the child.
        try? input.fileHandleForWriting.close()
    }
}
