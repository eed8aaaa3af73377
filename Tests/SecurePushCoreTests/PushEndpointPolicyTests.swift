import SecurePushCore
import Testing

@Suite("Push endpoint policy: URL form, host allowlist, IP literals")
struct PushEndpointPolicyTests {
    static let policy = PushEndpointPolicy(
        allowedHosts: ["push.services.mozilla.com", "Example.COM.", "*.wildcard.test", "127.0.0.1", "10.1.2.3", "2001:DB8::1", "2606:4700::1111"],
        allowedPrivateNetworks: [IPNetwork("10.1.0.0/16")!],
        allowedHostsSetting: "SECUREPUSH_WEBPUSH_ALLOWED_HOSTS"
    )

    struct Row: Sendable, CustomTestStringConvertible {
        var url: String
        /// The refusal, or nil when the URL is allowed.
        var refusal: String?
        var testDescription: String { url }
    }

    @Test("a policy and a label of its own for each platform whose token is a URL, no policy for any other", arguments: Platform.allCases)
    func everyURLPlatformHasAPolicy(platform: Platform) {
        let policy = PushEndpointPolicies().policy(for: platform)
        let label = PushEndpointPolicies.label(for: platform)
        if platform.tokenIsURL {
            #expect(policy != nil, "add \(platform.rawValue)'s policy to PushEndpointPolicies")
            #expect(label != "\(platform.rawValue) token", "name \(platform.rawValue)'s URL in PushEndpointPolicies.label(for:)")
        } else {
            #expect(policy == nil)
            #expect(label == "\(platform.rawValue) token")
        }
    }

    static let rows: [Row] = [
        Row(url: "https://updates.push.services.mozilla.com/wpush/v2/abc", refusal: nil),
        Row(url: "https://push.services.mozilla.com/x", refusal: nil),
        Row(url: "https://PUSH.Services.Mozilla.com./x", refusal: nil),
        Row(url: "HTTPS://example.com:8443/x", refusal: nil),
        Row(url: "https://a.b.example.com/x", refusal: nil),
        Row(url: "https://wildcard.test/x", refusal: nil),
        Row(url: "https://10.1.2.3/x", refusal: nil),
        Row(url: "https://[2606:4700:0::1111]/x", refusal: nil),
        Row(url: "http://example.com/x", refusal: "it is not an https URL"),
        Row(url: "wss://example.com/x", refusal: "it is not an https URL"),
        Row(url: "example.com/x", refusal: "it is not a URL"),
        Row(url: "not a url", refusal: "it is not a URL"),
        Row(url: "https:///x", refusal: "it has no host"),
        Row(url: "https://user:pw@example.com/x", refusal: "it carries a user name or password"),
        Row(url: "https://example.com@evil.com/x", refusal: "it carries a user name or password"),
        Row(url: "https://example.com:99999/x", refusal: "its port 99999 is out of range"),
        Row(url: "https://evil.com/x", refusal: "its host evil.com is not in SECUREPUSH_WEBPUSH_ALLOWED_HOSTS"),
        Row(url: "https://example.com.evil.com/x", refusal: "its host example.com.evil.com is not in SECUREPUSH_WEBPUSH_ALLOWED_HOSTS"),
        Row(url: "https://evilexample.com/x", refusal: "its host evilexample.com is not in SECUREPUSH_WEBPUSH_ALLOWED_HOSTS"),
        Row(url: "https://localhost/x", refusal: "its host localhost is not in SECUREPUSH_WEBPUSH_ALLOWED_HOSTS"),
        Row(url: "https://127.0.0.1:5432/x", refusal: "its host 127.0.0.1 is not a public address (loopback, 127.0.0.0/8)"),
        Row(
            url: "https://169.254.169.254/latest/meta-data", refusal: "its host 169.254.169.254 is not a public address (link-local, 169.254.0.0/16)"),
        Row(url: "https://10.0.0.1/x", refusal: "its host 10.0.0.1 is not a public address (private, 10.0.0.0/8)"),
        Row(url: "https://[::1]/x", refusal: "its host ::1 is not a public address (loopback, ::1/128)"),
        Row(url: "https://[::ffff:127.0.0.1]/x", refusal: "its host ::ffff:127.0.0.1 is not a public address (IPv4-mapped, ::ffff:0:0/96)"),
        Row(url: "https://[FE80::1]/x", refusal: "its host fe80::1 is not a public address (link-local, fe80::/10)"),
        Row(url: "https://[fe80::1%25eth0]/x", refusal: "its host carries an IPv6 zone identifier or percent sign"),
        Row(url: "https://[2001:db8::1]/x", refusal: "its host 2001:db8::1 is not a public address (documentation, 2001:db8::/32)"),
        Row(url: "https://8.8.8.8/x", refusal: "its host 8.8.8.8 is not in SECUREPUSH_WEBPUSH_ALLOWED_HOSTS"),
        Row(url: "https://127.1/x", refusal: "its host 127.1 is a numeric address not written as a dotted quad (a.b.c.d)"),
        Row(url: "https://2130706433/x", refusal: "its host 2130706433 is a numeric address not written as a dotted quad (a.b.c.d)"),
        Row(url: "https://0x7f.0.0.1/x", refusal: "its host 0x7f.0.0.1 is a numeric address not written as a dotted quad (a.b.c.d)"),
        Row(url: "https://0177.0.0.1/x", refusal: "its host 0177.0.0.1 is a numeric address not written as a dotted quad (a.b.c.d)"),
        Row(url: "https://%31%32%37.0.0.1/x", refusal: "its host 127.0.0.1 is not a public address (loopback, 127.0.0.0/8)"),
        Row(url: "https://exa$mple.com/x", refusal: "its host exa$mple.com is not a valid host name"),
        // The public push services answer on 443 only; a host the operator allowed keeps any port (example.com:8443 above).
        Row(url: "https://updates.push.services.mozilla.com:443/wpush/v2/abc", refusal: nil),
        Row(url: "https://updates.push.services.mozilla.com:8001/wpush/v2/abc", refusal: "its port 8001 is not push.services.mozilla.com's (443)"),
        Row(url: "https://push.services.mozilla.com:80/x", refusal: "its port 80 is not push.services.mozilla.com's (443)"),
    ]

    @Test("URLs", arguments: rows)
    func check(_ row: Row) {
        do {
            _ = try Self.policy.check(row.url)
            #expect(row.refusal == nil)
        } catch {
            #expect(error.reason == row.refusal)
        }
    }

    @Test("the checked endpoint keeps the host the HTTP client will use")
    func endpoint() throws {
        let endpoint = try Self.policy.check("https://Sub.Example.com.:8443/path?token=secret")
        #expect(endpoint.urlHost == "Sub.Example.com.")
        #expect(endpoint.host == "sub.example.com")
        #expect(endpoint.port == 8443)
        #expect(endpoint.address == nil)
        #expect(try Self.policy.check("https://10.1.2.3/x").address == IPAddress("10.1.2.3"))
    }

    @Test("host matching: suffixes on label boundaries, any case, trailing dot; IP entries match only themselves")
    func hostMatching() {
        let policy = PushEndpointPolicy(allowedHosts: ["notify.windows.com", " *.push.apple.com ", "", "0.0.1", "127.0.0.1"])
        #expect(policy.allowedHosts == ["notify.windows.com", "push.apple.com", "0.0.1", "127.0.0.1"])
        for host in [
            "notify.windows.com", "db5p.notify.windows.com", "DB5P.NOTIFY.WINDOWS.COM.", "web.push.apple.com", "push.apple.com", "127.0.0.1",
        ] {
            #expect(policy.isAllowedHost(host), "\(host)")
        }
        for host in ["evilnotify.windows.com", "notify.windows.com.evil.com", "windows.com", "apple.com", "127.0.0.2", "10.0.0.1", ""] {
            #expect(!policy.isAllowedHost(host), "\(host)")
        }
    }

    @Test("resolved addresses: refused unless public or in an allowed private network")
    func addresses() {
        #expect(throws: Never.self) { try Self.policy.check(address: IPAddress("17.1.2.3")!, host: "web.push.apple.com") }
        #expect(throws: Never.self) { try Self.policy.check(address: IPAddress("10.1.200.1")!, host: "push.internal") }
        let cases: [(String, String)] = [
            ("127.0.0.1", "its host example.com resolves to 127.0.0.1, which is not a public address (loopback, 127.0.0.0/8)"),
            ("10.2.0.1", "its host example.com resolves to 10.2.0.1, which is not a public address (private, 10.0.0.0/8)"),
            ("::ffff:10.1.0.1", "its host example.com resolves to ::ffff:10.1.0.1, which is not a public address (IPv4-mapped, ::ffff:0:0/96)"),
        ]
        for (address, message) in cases {
            #expect(throws: PushEndpointRefusal(message)) { try Self.policy.check(address: IPAddress(address)!, host: "example.com") }
        }
    }
}
