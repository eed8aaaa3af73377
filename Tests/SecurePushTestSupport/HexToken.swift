import Foundation

/// A random APNs-style device token: `bytes` random bytes as hex digits (64 digits by default).
public func hexToken(bytes: Int = 32) -> String {
    (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
}
