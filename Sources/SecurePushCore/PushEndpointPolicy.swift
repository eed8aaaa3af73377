import Foundation

/// Which device-supplied push URLs (Web Push endpoints, WNS channel URIs) SecurePush may send to.
///
/// These URLs are attacker-supplied: without a policy, a device could make the dispatcher POST to
/// `https://169.254.169.254/...` or a database port on the private network. A URL is acceptable when it
/// is `https` with a host and no user information, its host is on the allowlist, and, when the host is
/// an IP address, that address is public or inside an allowed private network. At send time every
/// address the host resolves to must pass `check(address:host:)` too. Pure: no DNS, no I/O.
public struct PushEndpointPolicy: Hashable, Sendable {
    /// Host suffixes: `example.com` allows `example.com` and every `*.example.com`. Lowercase, no
    /// trailing dot.
    public let allowedHosts: [String]
    /// Non-public blocks the operator allowed (a self-hosted push server on a private network).
    public let allowedPrivateNetworks: [IPNetwork]
    /// The setting that holds `allowedHosts`, named when a host is not on it.
    public let allowedHostsSetting: String

    /// Creates a policy. `allowedHosts` entries are normalized: lowercased, a trailing dot and a leading
    /// `*.` removed, empty entries dropped.
    public init(allowedHosts: [String], allowedPrivateNetworks: [IPNetwork] = [], allowedHostsSetting: String = "the allowed hosts") {
        self.allowedHosts = allowedHosts.compactMap { entry in
            var host = Self.normalize(entry.trimmingCharacters(in: .whitespaces))
            if host.hasPrefix("*.") { host.removeFirst(2) }
            return host.isEmpty ? nil : host
        }
        self.allowedPrivateNetworks = allowedPrivateNetworks
        self.allowedHostsSetting = allowedHostsSetting
    }

    /// Checks the URL's form and host without resolving anything. Throws why it is refused.
    public func check(_ url: String) throws(PushEndpointRefusal) -> PushEndpoint {
        guard let parsed = URL(string: url), let scheme = parsed.scheme else { throw PushEndpointRefusal("it is not a URL") }
        guard scheme.lowercased() == "https" else { throw PushEndpointRefusal("it is not an https URL") }
        guard parsed.user == nil, parsed.password == nil else { throw PushEndpointRefusal("it carries a user name or password") }
        // `URL.host` is what AsyncHTTPClient connects to (percent-decoded, brackets removed), so it is
        // what is checked.
        guard let urlHost = parsed.host, !urlHost.isEmpty else { throw PushEndpointRefusal("it has no host") }
        if let port = parsed.port, !(1...65535).contains(port) { throw PushEndpointRefusal("its port \(port) is out of range") }
        let host = Self.normalize(urlHost)
        let address = try Self.literalAddress(host)
        if let address { try check(address: address, host: nil) }
        guard isAllowedHost(host) else {
            throw PushEndpointRefusal("its host \(host) is not in \(allowedHostsSetting)")
        }
        if let port = parsed.port, port != 443, let service = Self.publicService(ofHost: host) {
            throw PushEndpointRefusal("its port \(port) is not \(service)'s (443)")
        }
        return PushEndpoint(urlHost: urlHost, host: host, port: parsed.port, address: address)
    }

    /// The public push service (`PushEndpointPolicies.publicServiceHosts`) `host` belongs to, `nil` for any
    /// other host. Those services answer on 443 only: another port of theirs is a device's choice that can only
    /// fail (slowly, at the connect timeout), so it is refused. Hosts the operator allowed keep any port.
    static func publicService(ofHost host: String) -> String? {
        PushEndpointPolicies.publicServiceHosts.first { host == $0 || host.hasSuffix("." + $0) }
    }

    /// Whether `host` (any case, trailing dot ignored) is an allowed host or a subdomain of one; an IP
    /// address only when listed itself.
    public func isAllowedHost(_ host: String) -> Bool {
        let host = Self.normalize(host)
        // An address matches only itself (`0.0.1` must not allow `127.0.0.1`).
        if let address = IPAddress(host) { return allowedHosts.contains { IPAddress($0) == address } }
        return allowedHosts.contains { suffix in host == suffix || host.hasSuffix("." + suffix) }
    }

    /// The allowed host `host` falls under (the longest matching entry), `nil` when none does: the push
    /// service a device's endpoint belongs to, whatever subdomain the device registered.
    public func service(ofHost host: String) -> String? {
        let host = Self.normalize(host)
        if let address = IPAddress(host) { return allowedHosts.first { IPAddress($0) == address } }
        return allowedHosts.filter { suffix in host == suffix || host.hasSuffix("." + suffix) }.max { $0.count < $1.count }
    }

    /// Refuses `address` unless it is public or inside an allowed private network. `host` is the name
    /// it was resolved from, for the message.
    public func check(address: IPAddress, host: String?) throws(PushEndpointRefusal) {
        guard let range = address.nonPublicRange else { return }
        if allowedPrivateNetworks.contains(where: { $0.contains(address) }) { return }
        let subject = host.map { "its host \($0) resolves to \(address), which" } ?? "its host \(address)"
        throw PushEndpointRefusal("\(subject) is not a public address (\(range.name), \(range.block))")
    }

    /// Lowercase, without brackets and without one trailing dot.
    static func normalize(_ host: String) -> String {
        var host = host.lowercased()
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host.removeLast() }
        return host
    }

    /// The address an IP-literal host names, `nil` for a host name. Hosts a resolver would read as an
    /// address although they are not in canonical form (`127.1`, `0x7f.0.0.1`, `2130706433`, `010.0.0.1`)
    /// are refused, as are IPv6 zone identifiers and characters no host name has.
    static func literalAddress(_ host: String) throws(PushEndpointRefusal) -> IPAddress? {
        if host.isEmpty { throw PushEndpointRefusal("it has no host") }
        if host.contains("%") { throw PushEndpointRefusal("its host carries an IPv6 zone identifier or percent sign") }
        if host.contains(":") {
            guard let address = IPAddress(host) else { throw PushEndpointRefusal("its host \(host) is not a valid IPv6 address") }
            return address
        }
        if let address = IPAddress(host) { return address }
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789-._")
        guard host.allSatisfy({ allowed.contains($0) }), !host.hasPrefix("."), !host.contains("..") else {
            throw PushEndpointRefusal("its host \(host) is not a valid host name")
        }
        // WHATWG URL and inet_aton read a host whose last label is numeric (or 0x...) as an IPv4 address.
        let last = host.split(separator: ".").last ?? ""
        if last.allSatisfy(\.isNumber) || (last.hasPrefix("0x") && last.dropFirst(2).allSatisfy(\.isHexDigit)) {
            throw PushEndpointRefusal("its host \(host) is a numeric address not written as a dotted quad (a.b.c.d)")
        }
        return nil
    }
}

/// A URL that passed `PushEndpointPolicy.check(_:)`.
public struct PushEndpoint: Hashable, Sendable {
    /// The host exactly as `URL.host` gives it (what an HTTP client connects to and sends as SNI).
    public var urlHost: String
    /// The host lowercased, without brackets or a trailing dot.
    public var host: String
    /// The port, when the URL names one.
    public var port: Int?
    /// The address, when the host is an IP literal (no resolution needed).
    public var address: IPAddress?
}

/// Why a push URL is refused: a sentence fragment such as `its host 127.0.0.1 is not a public address
/// (loopback, 127.0.0.0/8)`. It never contains the URL's path or query (where push tokens live).
public struct PushEndpointRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// The reason.
    public var reason: String

    /// Creates a refusal.
    public init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}
