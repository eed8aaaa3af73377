import Foundation
import HTTPTypes
import NIOCore
import SecurePushCore

/// The address a request came from: the peer's, or, when the peer is a trusted proxy, the last address
/// in `X-Forwarded-For` that is not itself a trusted proxy. A header from anyone else is ignored. A hop
/// that is not an IP address (garbage, a name, an over-long value) is not believed: the request counts
/// as the proxy's own, so the throttle key is always a short, canonical address.
enum ClientAddress {
    static func resolve(peer: SocketAddress?, forwardedFor: String?, trustedProxies: TrustedProxies) -> String {
        let peerAddress = peer?.ipAddress ?? "unknown"
        guard trustedProxies.trusts(peerAddress), let forwardedFor, forwardedFor.utf8.count <= 4096 else { return peerAddress }
        let hops = forwardedFor.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        for hop in hops.reversed() where !trustedProxies.trusts(hop) {
            guard hop.utf8.count <= 64, let address = IPAddress(hop) else { return peerAddress }
            return address.description
        }
        return peerAddress
    }
}

extension HTTPField.Name {
    /// `X-Forwarded-For`.
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
}
