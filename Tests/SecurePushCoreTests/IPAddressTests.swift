import SecurePushCore
import Testing

@Suite("IP addresses: strict parsing and the public/non-public classifier")
struct IPAddressTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var text: String
        /// The range name, or nil for a public address.
        var range: String?
        var testDescription: String { "\(text) → \(range ?? "public")" }
    }

    /// The rows for `range` (nil: public addresses), one per address text.
    static func rows(_ range: String?, _ texts: String...) -> [Row] {
        texts.map { Row(text: $0, range: range) }
    }

    static let classified: [Row] = [
        // IPv4
        rows(nil, "8.8.8.8", "1.1.1.1", "142.250.74.106", "100.63.255.255", "100.128.0.0", "172.15.255.255", "172.32.0.0", "198.20.0.0"),
        rows("unspecified", "0.0.0.0", "0.1.2.3"),
        rows("private", "10.0.0.1", "10.255.255.255", "172.16.0.1", "172.31.255.255", "192.168.1.1"),
        rows("shared (CGNAT)", "100.64.0.1", "100.127.255.254"),
        rows("loopback", "127.0.0.1", "127.255.255.254"),
        rows("link-local", "169.254.169.254"),
        rows("IETF protocol assignments", "192.0.0.8"),
        rows("documentation", "192.0.2.1", "198.51.100.7", "203.0.113.9"),
        rows("6to4 relay anycast", "192.88.99.1"),
        rows("benchmarking", "198.18.0.1", "198.19.255.255"),
        rows("multicast", "224.0.0.1", "239.255.255.250"),
        rows("reserved", "240.0.0.1"),
        rows("broadcast", "255.255.255.255"),
        // IPv6
        rows(nil, "2606:4700:4700::1111", "2A00:1450:4001:82B::200E"),
        rows("unspecified", "::"),
        rows("loopback", "::1", "0:0:0:0:0:0:0:1"),
        rows("IPv4-mapped", "::ffff:127.0.0.1", "::ffff:8.8.8.8", "::FFFF:7F00:1", "::ffff:10.0.0.1"),
        rows("IPv4-compatible", "::127.0.0.1"),
        rows("NAT64", "64:ff9b::a00:1", "64:ff9b::8.8.8.8"),
        rows("local-use NAT64", "64:ff9b:1::1"),
        rows("discard-only", "100::1"),
        rows("documentation", "2001:db8::1", "2001:0DB8:ffff::", "3fff::1"),
        rows("IETF protocol assignments", "2001::1"),
        rows("6to4", "2002:7f00:1::1"),
        rows("unique-local", "fc00::1", "fd12:3456:789a::1"),
        rows("link-local", "fe80::1", "FE80::1", "febf::1"),
        rows("site-local", "fec0::1"),
        rows("multicast", "ff02::1", "FF05::1:3"),
        rows("reserved", "4000::1", "1::1"),
    ].flatMap { $0 }

    @Test("classification", arguments: classified)
    func classify(_ row: Row) throws {
        let address = try #require(IPAddress(row.text))
        #expect(address.nonPublicRange?.name == row.range)
        #expect(address.isPublic == (row.range == nil))
    }

    static let notAddresses: [String] = [
        // IPv4 shorthand and non-decimal forms are not parsed (a policy refuses them as hosts).
        "127.1", "127.0.1", "2130706433", "0x7f.0.0.1", "0x7f000001", "0177.0.0.1", "010.0.0.1", "127.0.0.01",
        "256.0.0.1", "1.2.3.4.5", "1.2.3.", ".1.2.3", "1.2.3.-4", "1.2.3.+4", " 1.2.3.4", "1.2.3.4 ", "١.٢.٣.٤",
        // IPv6 forms that are not addresses.
        "[::1]", "fe80::1%eth0", "fe80::1%25eth0", ":::", "1::2::3", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "12345::",
        "::g", ":1:2:3:4:5:6:7", "1:2:3:4:5:6:7:", "::1.2.3", "::1.2.3.4:5", "1:2:3:4:5:6:7:1.2.3.4", "", "localhost",
    ]

    @Test("malformed and shorthand forms are not addresses", arguments: notAddresses)
    func notAnAddress(_ text: String) {
        #expect(IPAddress(text) == nil)
    }

    @Test("IPv6 text forms parse to the same address, printed per RFC 5952")
    func ipv6Forms() throws {
        let forms = ["2001:db8:0:0:0:0:2:1", "2001:DB8::2:1", "2001:0db8:0000:0000:0000:0000:0002:0001", "2001:db8:0::2:1"]
        let addresses = try forms.map { try #require(IPAddress($0)) }
        #expect(Set(addresses).count == 1)
        #expect(addresses[0].description == "2001:db8::2:1")
        #expect(IPAddress("::FFFF:7F00:1")?.description == "::ffff:127.0.0.1")
        #expect(IPAddress("::ffff:127.0.0.1")?.ipv4Mapped == IPAddress("127.0.0.1"))
        #expect(IPAddress("1:0:0:2:0:0:0:3")?.description == "1:0:0:2::3")
        #expect(IPAddress("1:2:3:4:5:6:7::")?.description == "1:2:3:4:5:6:7:0")
        #expect(IPAddress("::")?.description == "::")
        #expect(IPAddress("10.0.0.1")?.description == "10.0.0.1")
        #expect(IPAddress("10.0.0.1")?.isIPv4 == true)
    }

    @Test("CIDR blocks")
    func networks() throws {
        let private10 = try #require(IPNetwork("10.0.0.0/8"))
        #expect(private10.contains(IPAddress("10.200.3.4")!))
        #expect(!private10.contains(IPAddress("11.0.0.0")!))
        #expect(!private10.contains(IPAddress("::ffff:10.0.0.1")!), "IPv4 blocks never match IPv6 addresses")
        let ula = try #require(IPNetwork("FD00::/8"))
        #expect(ula.contains(IPAddress("fd12::1")!))
        #expect(ula.description == "fd00::/8")
        #expect(IPNetwork("127.0.0.1")?.prefixLength == 32)
        #expect(IPNetwork("::1")?.prefixLength == 128)
        #expect(IPNetwork("0.0.0.0/0")?.contains(IPAddress("8.8.8.8")!) == true)
        #expect(IPNetwork("172.16.0.0/12")?.contains(IPAddress("172.31.1.1")!) == true)
        for bad in ["10.0.0.1/8", "10.0.0.0/33", "::/129", "10.0.0.0/", "/8", "10.0.0.0/8/8", "10.0.0.0/-1", "10/8", "example.com/8", "10.0.0.0/+8"] {
            #expect(IPNetwork(bad) == nil, "\(bad)")
        }
    }
}
