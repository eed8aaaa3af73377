/// A block of addresses in CIDR notation (`10.0.0.0/8`, `fd00::/8`).
public struct IPNetwork: Hashable, Sendable, CustomStringConvertible {
    /// The first address of the block (its host bits are zero).
    public let address: IPAddress
    /// The number of leading bits every address of the block shares.
    public let prefixLength: Int

    /// A block; `nil` when the prefix is longer than the address or `address` has host bits set.
    public init?(address: IPAddress, prefixLength: Int) {
        guard (0...(address.bytes.count * 8)).contains(prefixLength) else { return nil }
        guard Self.masked(address.bytes, prefixLength) == address.bytes else { return nil }
        self.address = address
        self.prefixLength = prefixLength
    }

    /// Parses `address/prefix`; a bare address is a block of one (`/32`, `/128`). `nil` when malformed
    /// or when host bits are set (`10.0.0.1/8`): such an entry is almost always a typo.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = IPAddress(String(parts[0])) else { return nil }
        let length: Int
        if parts.count == 2 {
            guard (1...3).contains(parts[1].count), parts[1].allSatisfy({ $0.isASCII && $0.isNumber }), let parsed = Int(parts[1]) else {
                return nil
            }
            length = parsed
        } else {
            length = address.bytes.count * 8
        }
        self.init(address: address, prefixLength: length)
    }

    /// Whether `candidate` is in this block (never across IPv4 and IPv6).
    public func contains(_ candidate: IPAddress) -> Bool {
        candidate.bytes.count == address.bytes.count && Self.masked(candidate.bytes, prefixLength) == address.bytes
    }

    public var description: String { "\(address)/\(prefixLength)" }

    static func masked(_ bytes: [UInt8], _ prefixLength: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let bits = min(max(prefixLength - index * 8, 0), 8)
            return bits == 8 ? byte : byte & ~(UInt8(0xff) >> bits)
        }
    }
}
