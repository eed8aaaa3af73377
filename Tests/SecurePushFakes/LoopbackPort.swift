import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// TCP ports on 127.0.0.1 for servers the tests and drivers start.
public enum LoopbackPort {
    /// Ports this process has handed out: tests run in parallel, and two of them could otherwise draw the same
    /// free port and both start a server on it before either binds (CI saw a relay fail so, "Address already in
    /// use"). A port is handed out once per process; 22,001 candidates outlast any test run.
    private static let handedOut = NIOLockedValueBox(Set<Int>())

    /// A port nothing is bound to now and this process has not handed out before, below the kernel's ephemeral
    /// range (32768 and up here), so no process bound to port 0 (a dispatcher's operations listener) or outgoing
    /// connection takes it between this check and the server's bind; `nil` after 100 tries.
    public static func free() -> Int? {
        for _ in 0..<100 {
            let candidate = Int.random(in: 10_000...32_000)
            guard isFree(candidate) else { continue }
            if handedOut.withLockedValue({ $0.insert(candidate).inserted }) { return candidate }
        }
        return nil
    }

    /// Whether `port` on 127.0.0.1 can be bound now.
    public static func isFree(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return withSocketAddress(port: port) { bind(descriptor, $0, $1) } == 0
    }

    /// Calls `body` with the IPv4 address `host`:`port` and its length, as `bind` and `connect` take them.
    public static func withSocketAddress<Result>(
        host: String = "127.0.0.1", port: Int = 0, _ body: (UnsafePointer<sockaddr>, socklen_t) throws -> Result
    ) rethrows -> Result {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(host)
        return try withUnsafePointer(to: &address) {
            try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { try body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }
}
