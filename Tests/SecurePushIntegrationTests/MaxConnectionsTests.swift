import Foundation
import SecurePushFakes
import SecurePushTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A plain TCP connection to the API, so the test controls exactly how many connections are open. Its
/// waits block a thread, so they run on threads of their own, never on the concurrency pool (two threads on
/// this machine: a blocked pool stalls every other test's timers). Used by one task at a time.
final class RawHTTPConnection: @unchecked Sendable {
    let descriptor: Int32
    private var closed = false

    /// Connects to 127.0.0.1:`port` from `source` (another loopback address stands for another client).
    init(port: Int, from source: String? = nil) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("no socket: errno \(errno)") }
        if let source {
            let bound = LoopbackPort.withSocketAddress(host: source) { bind(descriptor, $0, $1) }
            guard bound == 0 else {
                _ = Glibc.close(descriptor)
                throw TestFailure("cannot bind \(source)")
            }
        }
        let result = LoopbackPort.withSocketAddress(port: port) { connect(descriptor, $0, $1) }
        guard result == 0 else {
            _ = Glibc.close(descriptor)
            throw TestFailure("cannot connect to 127.0.0.1:\(port)")
        }
    }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, 0) }
    }

    /// What arrives within `milliseconds`, or nil when nothing does.
    func receive(within milliseconds: Int32) async -> String? {
        await offThePool { self.receiveBlocking(within: milliseconds) }
    }

    private func receiveBlocking(within milliseconds: Int32) -> String? {
        var events = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&events, 1, milliseconds) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
    }

    /// Whether the server closed the connection (end of stream, or a reset) within `milliseconds`; what it
    /// sent before is read and dropped.
    func closedByPeer(within milliseconds: Int32) async -> Bool {
        await offThePool { self.closedByPeerBlocking(within: milliseconds) }
    }

    private func closedByPeerBlocking(within milliseconds: Int32) -> Bool {
        var events = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now + .milliseconds(Int(milliseconds))
        while ContinuousClock.now < deadline {
            let left = Int32(max(1, (deadline - ContinuousClock.now).components.seconds * 1000 + 1))
            guard poll(&events, 1, min(left, milliseconds)) > 0 else { continue }
            if recv(descriptor, &buffer, buffer.count, 0) <= 0 { return true }
        }
        return false
    }

    /// Closes once (a second call does nothing: the descriptor number may belong to someone else by then).
    func close() {
        guard !closed else { return }
        closed = true
        _ = Glibc.close(descriptor)
    }
}

@Suite("HTTP API: maximum connections")
struct MaxConnectionsTests {
    /// Through the real binary: HummingbirdTesting's live server drops the connection limit (its test
    /// application rebuilds the configuration without `availableConnectionsDelegate`).
    @Test("SECUREPUSH_MAX_CONNECTIONS: a connection beyond the limit is not served until one closes")
    func maxConnections() async throws {
        try await TestDatabase.with { db in
            try await withServedAPI(db, environment: ["SECUREPUSH_MAX_CONNECTIONS": "1"]) { port in
                let request = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                try await eventually("the server answers", timeout: .seconds(30)) {
                    guard let probe = try? RawHTTPConnection(port: port) else { return false }
                    defer { probe.close() }
                    probe.send(request)
                    return await probe.receive(within: 2_000)?.hasPrefix("HTTP/1.1 200") == true
                }
                let first = try RawHTTPConnection(port: port)
                defer { first.close() }
                first.send(request)
                #expect(await first.receive(within: 10_000)?.hasPrefix("HTTP/1.1 200") == true)
                // The first connection stays open (keep-alive): the second waits in the listen backlog.
                let second = try RawHTTPConnection(port: port)
                defer { second.close() }
                second.send(request)
                #expect(await second.receive(within: 1_000) == nil, "served beyond the limit")
                first.close()
                #expect(await second.receive(within: 10_000)?.hasPrefix("HTTP/1.1 200") == true, "served once the first closed")
            }
        }
    }
}

/// Runs a blocking call on a thread of its own and awaits its result, keeping the concurrency pool free
/// (on Linux, Dispatch's global queues share their threads with the pool).
func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// `offThePool` for a call that throws.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
