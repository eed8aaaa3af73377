/// A special-purpose address block a push must never reach (RFC 6890 and the IANA special-purpose
/// registries), unless the operator allowed it.
public struct NonPublicRange: Hashable, Sendable {
    /// What the block is for: `loopback`, `private`, `link-local`, ...
    public var name: String
    /// The block, as written in messages (`127.0.0.0/8`).
    public var block: String
}

extension IPAddress {
    /// The blocks, most specific first (the first match names the address).
    static let nonPublicBlocks: [(network: IPNetwork, block: String, name: String)] = [
        // IPv4
        ("0.0.0.0/8", "unspecified"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "shared (CGNAT)"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "IETF protocol assignments"),
        ("192.0.2.0/24", "documentation"),
        ("192.88.99.0/24", "6to4 relay anycast"),
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "benchmarking"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("224.0.0.0/4", "multicast"),
        ("255.255.255.255/32", "broadcast"),
        ("240.0.0.0/4", "reserved"),
        // IPv6
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("::ffff:0:0/96", "IPv4-mapped"),
        ("::/96", "IPv4-compatible"),
        ("64:ff9b::/96", "NAT64"),
        ("64:ff9b:1::/48", "local-use NAT64"),
        ("100::/64", "discard-only"),
        ("2001:db8::/32", "documentation"),
        ("2001::/23", "IETF protocol assignments"),
        ("2002::/16", "6to4"),
        ("3fff::/20", "documentation"),
        ("5f00::/16", "SRv6 SIDs"),
        ("fc00::/7", "unique-local"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("ff00::/8", "multicast"),
    ].map { (IPNetwork($0.0)!, $0.0, $0.1) }

    /// Only 2000::/3 is allocated for global unicast; everything else in IPv6 is reserved.
    static let globalUnicast = IPNetwork("2000::/3")!

    /// The special-purpose block this address is in, `nil` when it is a public (globally routable
    /// unicast) address. IPv4-mapped IPv6 addresses are never public, whatever they embed.
    public var nonPublicRange: NonPublicRange? {
        if let match = Self.nonPublicBlocks.first(where: { $0.network.contains(self) }) {
            return NonPublicRange(name: match.name, block: match.block)
        }
        if !isIPv4 && !Self.globalUnicast.contains(self) {
            return NonPublicRange(name: "reserved", block: "outside 2000::/3")
        }
        return nil
    }

    /// Whether this is a public (globally routable unicast) address.
    public var isPublic: Bool { nonPublicRange == nil }
}
