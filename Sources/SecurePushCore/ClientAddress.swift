import Foundation

/// The address a request came from: the peer's, or, when the peer is a trusted proxy, the last address
/// in `X-Forwarded-For` that is not itself a trusted proxy. A header from anyone else is ignored. A hop
/// that is not an IP address (garbage, a name, an over-long value) is not believed: the request counts
/// as the proxy's own, so the throttle key is always a short, canonical address.
public enum ClientAddress {
    /// The client of a request from `peer` (the socket's IP address, `nil` when unknown) with the header
    /// `forwardedFor`.
    public static func resolve(peer: String?, forwardedFor: String?, trustedProxies: TrustedProxies) -> String {
        let peerAddress = peer ?? "unknown"
        guard trustedProxies.trusts(peerAddress), let forwardedFor, forwardedFor.utf8.count <= 4096 else { return peerAddress }
        let hops = forwardedFor.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        for hop in hops.reversed() where !trustedProxies.trusts(hop) {
            guard hop.utf8.count <= 64, let address = IPAddress(hop) else { return peerAddress }
            return address.description
        }
        return peerAddress
    }
}
