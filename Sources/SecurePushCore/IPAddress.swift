import Foundation

/// An IPv4 or IPv6 address, parsed strictly from its canonical text forms.
///
/// IPv4 is accepted only as four decimal parts (`192.0.2.1`): no shorthand (`127.1`), no octal or
/// hexadecimal parts (`0177.0.0.1`, `0x7f.0.0.1`), no leading zeros. Resolvers (`getaddrinfo`, `inet_aton`)
/// read those forms as addresses, so `PushEndpointPolicy` refuses such hosts outright instead of
/// guessing. IPv6 follows RFC 4291 (any case, `::` once, an embedded dotted IPv4 tail); zone
/// identifiers (`%eth0`) and brackets are not part of an address.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 bytes (IPv6), network order.
    public let bytes: [UInt8]

    /// An address from its bytes: 4 for IPv4, 16 for IPv6; `nil` for any other length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Parses a dotted-quad IPv4 or an RFC 4291 IPv6 address; `nil` for anything else.
    public init?(_ text: String) {
        if let v4 = Self.parseIPv4(Substring(text)) {
            self.bytes = v4
        } else if let v6 = Self.parseIPv6(Substring(text)) {
            self.bytes = v6
        } else {
            return nil
        }
    }

    /// Whether this is an IPv4 address.
    public var isIPv4: Bool { bytes.count == 4 }

    /// The embedded IPv4 address of an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`).
    public var ipv4Mapped: IPAddress? {
        guard bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff else { return nil }
        return IPAddress(bytes: Array(bytes[12..<16]))
    }

    /// Dotted quad for IPv4; RFC 5952 text for IPv6 (lowercase, the longest run of zero groups as `::`,
    /// IPv4-mapped addresses as `::ffff:a.b.c.d`).
    public var description: String {
        if isIPv4 { return bytes.map(String.init).joined(separator: ".") }
        if let mapped = ipv4Mapped { return "::ffff:\(mapped)" }
        let groups = (0..<8).map { UInt16(bytes[2 * $0]) << 8 | UInt16(bytes[2 * $0 + 1]) }
        var best: (start: Int, length: Int) = (-1, 0)
        var index = 0
        while index < 8 {
            guard groups[index] == 0 else {
                index += 1
                continue
            }
            var end = index
            while end < 8 && groups[end] == 0 { end += 1 }
            if end - index > best.length { best = (index, end - index) }
            index = end
        }
        func hex(_ range: Range<Int>) -> String {
            range.map { String(groups[$0], radix: 16) }.joined(separator: ":")
        }
        guard best.length >= 2 else { return hex(0..<8) }
        return hex(0..<best.start) + "::" + hex((best.start + best.length)..<8)
    }

    static func parseIPv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            guard part.count == 1 || part.first != "0", let value = UInt8(part) else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    static func parseIPv6(_ text: Substring) -> [UInt8]? {
        guard text.contains(":") else { return nil }
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        let compressed = halves.count == 2
        var groups: [[UInt16]] = []
        for (index, half) in halves.enumerated() {
            let isLast = index == halves.count - 1
            guard let parsed = parseGroups(Substring(half), mayEndWithIPv4: isLast) else { return nil }
            groups.append(parsed)
        }
        let head = groups[0]
        let tail = compressed ? groups[1] : []
        let count = head.count + tail.count
        if compressed ? count > 7 : count != 8 { return nil }
        let all = head + Array(repeating: 0, count: 8 - count) + tail
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] }
    }

    /// `h16 *(":" h16)` with an optional dotted-quad last piece (two groups); the empty string is no groups.
    private static func parseGroups(_ text: Substring, mayEndWithIPv4: Bool) -> [UInt16]? {
        guard !text.isEmpty else { return [] }
        let pieces = text.split(separator: ":", omittingEmptySubsequences: false)
        var groups: [UInt16] = []
        for (index, piece) in pieces.enumerated() {
            if mayEndWithIPv4 && index == pieces.count - 1 && piece.contains(".") {
                guard let v4 = parseIPv4(piece) else { return nil }
                groups.append(UInt16(v4[0]) << 8 | UInt16(v4[1]))
                groups.append(UInt16(v4[2]) << 8 | UInt16(v4[3]))
                continue
            }
            guard (1...4).contains(piece.count), piece.allSatisfy({ $0.isASCII && $0.isHexDigit }), let value = UInt16(piece, radix: 16) else {
                return nil
            }
            groups.append(value)
        }
        return groups
    }
}
