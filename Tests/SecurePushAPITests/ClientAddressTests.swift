import NIOCore
import SecurePushCore
import Testing

@testable import SecurePushAPI

/// The client address the throttles key on: the peer, or, behind trusted proxies, the last untrusted
/// `X-Forwarded-For` hop.
@Suite("Client address and trusted proxies")
struct ClientAddressTests {
    static let proxies: TrustedProxies = ["10.0.0.0/8", "fd00::/8", "192.0.2.10"]

    static func resolve(peer: String?, _ forwardedFor: String?, trusting proxies: TrustedProxies = proxies) throws -> String {
        let address = try peer.map { try SocketAddress(ipAddress: $0, port: 40_000) }
        return ClientAddress.resolve(peer: address?.ipAddress, forwardedFor: forwardedFor, trustedProxies: proxies)
    }

    @Test("an untrusted peer's X-Forwarded-For is ignored")
    func untrustedPeer() throws {
        #expect(try Self.resolve(peer: "203.0.113.9", "198.51.100.7") == "203.0.113.9")
        #expect(try Self.resolve(peer: "10.0.0.2", "198.51.100.7", trusting: .none) == "10.0.0.2")
        #expect(try Self.resolve(peer: "192.0.2.11", "198.51.100.7") == "192.0.2.11")
        #expect(try Self.resolve(peer: nil, "198.51.100.7") == "unknown")
    }

    @Test("behind a trusted proxy the last untrusted hop is the client, whatever the client wrote before it")
    func trustedPeer() throws {
        #expect(try Self.resolve(peer: "10.0.0.2", "198.51.100.7") == "198.51.100.7")
        #expect(try Self.resolve(peer: "192.0.2.10", "198.51.100.7") == "198.51.100.7")
        #expect(try Self.resolve(peer: "10.0.0.2", "1.1.1.1, 198.51.100.7") == "198.51.100.7")
        #expect(try Self.resolve(peer: "10.0.0.2", " 1.1.1.1 ,198.51.100.7 ") == "198.51.100.7")
    }

    @Test("a chain of trusted proxies is walked back to the first untrusted hop")
    func proxyChain() throws {
        #expect(try Self.resolve(peer: "10.0.0.2", "198.51.100.7, 10.0.0.5, 10.9.9.9") == "198.51.100.7")
        #expect(try Self.resolve(peer: "fd00::2", "1.1.1.1, 198.51.100.7, fd00::5, 10.0.0.3") == "198.51.100.7")
        // Only trusted hops: the request is the (last) proxy's own.
        #expect(try Self.resolve(peer: "10.0.0.2", "10.0.0.5, 10.0.0.3") == "10.0.0.2")
    }

    @Test("a last untrusted hop that is not an address falls back to the peer, never to an earlier hop")
    func garbageHop() throws {
        let long = String(repeating: "1", count: 100)
        for hop in ["not-an-ip", "unknown", "198.51.100.7:443", "[2001:db8::1]", "0177.0.0.1", "127.1", long, "2001:db8::1%eth0"] {
            #expect(try Self.resolve(peer: "10.0.0.2", "198.51.100.7, \(hop)") == "10.0.0.2", "\(hop)")
        }
    }

    @Test("a header over 4096 bytes is ignored as a whole")
    func overLongHeader() throws {
        let filler = String(repeating: "10.0.0.5, ", count: 408)  // 4080 bytes
        let fits = filler + "198.51.100.7"  // 4092 bytes
        #expect(fits.utf8.count <= 4096)
        #expect(try Self.resolve(peer: "10.0.0.2", fits) == "198.51.100.7")
        let over = filler + "10.0.0.6, 198.51.100.7"
        #expect(over.utf8.count > 4096)
        #expect(try Self.resolve(peer: "10.0.0.2", over) == "10.0.0.2")
    }

    @Test("an IPv6 hop comes back in its canonical RFC 5952 form")
    func ipv6Canonical() throws {
        #expect(try Self.resolve(peer: "fd00::1", "2001:DB8:0:0:0:0:0:1") == "2001:db8::1")
        #expect(try Self.resolve(peer: "fd00::1", "2001:0db8:0000:0000:0001:0000:0000:0001") == "2001:db8::1:0:0:1")
        #expect(try Self.resolve(peer: "10.0.0.2", "::FFFF:198.51.100.7") == "::ffff:198.51.100.7")
        #expect(try Self.resolve(peer: "2001:db8::9", "198.51.100.7") == "2001:db8::9")
    }

    @Test("an empty or blank header, or none, leaves the peer")
    func emptyHeader() throws {
        for header in [nil, "", " ", ",", " , ,"] {
            #expect(try Self.resolve(peer: "10.0.0.2", header) == "10.0.0.2", "\(header ?? "nil")")
        }
    }

    @Test("TrustedProxies matches addresses and blocks, an IPv4-mapped peer as its IPv4, and ignores bad entries")
    func trustedProxies() throws {
        let proxies: TrustedProxies = ["10.0.0.0/8", "fd00::/8", "192.0.2.10", "garbage", "10.0.0.1/8", "172.16.0.0/33"]
        #expect(proxies.networks.map(\.description) == ["10.0.0.0/8", "fd00::/8", "192.0.2.10/32"])
        for trusted in ["10.0.0.1", "10.255.255.255", "fd12::1", "192.0.2.10", "::ffff:10.0.0.7", "::FFFF:192.0.2.10"] {
            #expect(proxies.trusts(trusted), "\(trusted)")
        }
        for untrusted in ["11.0.0.1", "9.255.255.255", "fe00::1", "192.0.2.11", "::ffff:11.0.0.1", "::a00:1", "garbage", "", "10.0.0.1/8"] {
            #expect(!proxies.trusts(untrusted), "\(untrusted)")
        }
        #expect(!TrustedProxies.none.trusts("10.0.0.1"))
        #expect(try Self.resolve(peer: "::ffff:10.0.0.7", "198.51.100.7") == "198.51.100.7")
    }
}
