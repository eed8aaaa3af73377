/// The peers whose `X-Forwarded-For` is believed (`SECUREPUSH_TRUSTED_PROXIES`): addresses and CIDR
/// blocks such as `10.0.0.0/8` or `fd00::/8`. An IPv4-mapped IPv6 peer (`::ffff:10.0.0.7`, as a
/// dual-stack listener reports IPv4 clients) is matched as the IPv4 address it carries.
public struct TrustedProxies: Sendable, Hashable, ExpressibleByArrayLiteral {
    /// The trusted blocks; a single address is a block of one.
    public var networks: [IPNetwork]

    /// Trusts the given blocks.
    public init(_ networks: [IPNetwork]) {
        self.networks = networks
    }

    /// Trusts the given addresses or blocks; entries that do not parse are ignored (configuration
    /// parsing rejects them with a message before this point).
    public init(arrayLiteral elements: String...) {
        self.networks = elements.compactMap(IPNetwork.init)
    }

    /// No proxy is trusted: `X-Forwarded-For` is always ignored.
    public static let none = TrustedProxies([])

    /// Whether `address` (textual, as a socket or a header gives it) is a trusted proxy.
    public func trusts(_ address: String) -> Bool {
        guard !networks.isEmpty, let parsed = IPAddress(address) else { return false }
        let candidates = [parsed] + (parsed.ipv4Mapped.map { [$0] } ?? [])
        return networks.contains { network in candidates.contains { network.contains($0) } }
    }
}
