extension Sequence where Element == UInt8 {
    /// Lowercase hexadecimal, two digits a byte. Written out by hand: Foundation's `String(format: "%02x")` a byte
    /// cost a read about 1.5 % of the machine's CPU in the authentication throttle's buckets (stop 67's profile).
    package var hexEncoded: String {
        var digits: [UInt8] = []
        digits.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            digits.append(Self.hexDigit(byte >> 4))
            digits.append(Self.hexDigit(byte & 0x0f))
        }
        return String(decoding: digits, as: UTF8.self)
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}
