import SecurePushCore
import SecurePushStore

extension ProviderSettings {
    /// `SECUREPUSH_WEBPUSH_ALLOWED_HOSTS`, `SECUREPUSH_WNS_ALLOWED_HOSTS`, `SECUREPUSH_UNIFIEDPUSH_ALLOWED_HOSTS`
    /// (comma-separated host suffixes; UnifiedPush has none by default) and `SECUREPUSH_PUSH_ALLOWED_PRIVATE_NETWORKS`
    /// (comma-separated CIDR blocks, shared by all three).
    static func endpointPolicies(_ values: ConfigurationValues) throws -> PushEndpointPolicies {
        let networks = try values.networks("SECUREPUSH_PUSH_ALLOWED_PRIVATE_NETWORKS")
        return PushEndpointPolicies(
            webPush: PushEndpointPolicy(
                allowedHosts: try hosts(values, "SECUREPUSH_WEBPUSH_ALLOWED_HOSTS", default: PushEndpointPolicies.defaultWebPushHosts),
                allowedPrivateNetworks: networks, allowedHostsSetting: "SECUREPUSH_WEBPUSH_ALLOWED_HOSTS"),
            wns: PushEndpointPolicy(
                allowedHosts: try hosts(values, "SECUREPUSH_WNS_ALLOWED_HOSTS", default: PushEndpointPolicies.defaultWNSHosts),
                allowedPrivateNetworks: networks, allowedHostsSetting: "SECUREPUSH_WNS_ALLOWED_HOSTS"),
            unifiedPush: PushEndpointPolicy(
                allowedHosts: try hosts(values, "SECUREPUSH_UNIFIEDPUSH_ALLOWED_HOSTS", default: []),
                allowedPrivateNetworks: networks, allowedHostsSetting: "SECUREPUSH_UNIFIEDPUSH_ALLOWED_HOSTS")
        )
    }

    static func hosts(_ values: ConfigurationValues, _ key: String, default defaultValue: [String]) throws -> [String] {
        guard let raw = values.string(key) else { return defaultValue }
        let hosts = list(raw)
        guard !hosts.isEmpty else { throw ConfigurationError("\(key) must list at least one host") }
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._:")
        for host in hosts {
            let name = host.hasPrefix("*.") ? String(host.dropFirst(2)) : host
            guard !name.isEmpty, name.allSatisfy({ allowed.contains($0) }), !name.hasPrefix(".") else {
                throw ConfigurationError("\(key) lists \"\(host)\", which is not a host name (example.com, *.example.com) or an IP address")
            }
        }
        return hosts
    }
}
