import NIOPosix
import SecurePushCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Resolves a host name to addresses. The providers resolve device-supplied hosts themselves so they can
/// check every address before connecting (and then connect to the address they checked).
public protocol HostResolver: Sendable {
    /// Every address (A and AAAA) `host` resolves to. Throws when it cannot be resolved.
    func addresses(of host: String) async throws -> [IPAddress]
}

/// The system resolver (`getaddrinfo`), called on NIO's blocking-I/O thread pool: never on an event loop
/// and never on the cooperative pool, where a slow DNS server would stall other tasks.
public struct SystemHostResolver: HostResolver {
    let pool: NIOThreadPool

    /// A resolver using `pool` (default: NIO's shared blocking-I/O pool).
    public init(pool: NIOThreadPool = .singleton) {
        self.pool = pool
    }

    public func addresses(of host: String) async throws -> [IPAddress] {
        try await pool.runIfActive { try Self.getaddrinfo(host) }
    }

    static func getaddrinfo(_ host: String) throws -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Darwin)
            hints.ai_socktype = SOCK_STREAM
        #else
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = host.withCString { name in
            #if canImport(Darwin)
                Darwin.getaddrinfo(name, nil, &hints, &list)
            #elseif canImport(Musl)
                Musl.getaddrinfo(name, nil, &hints, &list)
            #else
                Glibc.getaddrinfo(name, nil, &hints, &list)
            #endif
        }
        guard status == 0, let first = list else { throw HostResolutionError(code: status) }
        defer { freeaddrinfo(first) }
        var addresses: [IPAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let raw = entry.pointee.ai_addr, let address = Self.address(raw, family: entry.pointee.ai_family), !addresses.contains(address) {
                addresses.append(address)
            }
            cursor = entry.pointee.ai_next
        }
        return addresses
    }

    static func address(_ raw: UnsafeMutablePointer<sockaddr>, family: Int32) -> IPAddress? {
        switch family {
        case AF_INET:
            return raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                withUnsafeBytes(of: pointer.pointee.sin_addr) { IPAddress(bytes: Array($0)) }
            }
        case AF_INET6:
            return raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                withUnsafeBytes(of: pointer.pointee.sin6_addr) { IPAddress(bytes: Array($0)) }
            }
        default:
            return nil
        }
    }
}

/// `getaddrinfo` failed (the host does not exist, or DNS is unreachable).
public struct HostResolutionError: Error, CustomStringConvertible {
    /// The `EAI_*` code.
    public var code: Int32
    public var description: String { "host resolution failed (getaddrinfo \(code))" }
}
