/// The endpoint policies of the platforms whose push URLs come from devices (Web Push, WNS). The API
/// checks registrations against them and the providers check every send.
public struct PushEndpointPolicies: Hashable, Sendable {
    /// The public push services browsers subscribe with: Google (Chrome, FCM), Mozilla (Firefox),
    /// Apple (Safari, `web.push.apple.com`), Microsoft (Edge, WNS). See docs/providers.md.
    public static let defaultWebPushHosts = ["fcm.googleapis.com", "push.services.mozilla.com", "push.apple.com", "notify.windows.com"]
    /// Microsoft's notification hosts (`*.notify.windows.com`).
    public static let defaultWNSHosts = ["notify.windows.com"]
    /// The public push services (the defaults above): an endpoint under one of them must use port 443.
    public static let publicServiceHosts = Array(Set(defaultWebPushHosts + defaultWNSHosts)).sorted()

    /// Web Push subscription endpoints (`SECUREPUSH_WEBPUSH_ALLOWED_HOSTS`).
    public var webPush: PushEndpointPolicy
    /// WNS channel URIs (`SECUREPUSH_WNS_ALLOWED_HOSTS`).
    public var wns: PushEndpointPolicy
    /// UnifiedPush endpoints (`SECUREPUSH_UNIFIEDPUSH_ALLOWED_HOSTS`): none by default, the operator names the
    /// distributors it trusts (they are often self-hosted).
    public var unifiedPush: PushEndpointPolicy

    /// The defaults: the public push services, no private network.
    public init(
        webPush: PushEndpointPolicy = PushEndpointPolicy(allowedHosts: defaultWebPushHosts, allowedHostsSetting: "SECUREPUSH_WEBPUSH_ALLOWED_HOSTS"),
        wns: PushEndpointPolicy = PushEndpointPolicy(allowedHosts: defaultWNSHosts, allowedHostsSetting: "SECUREPUSH_WNS_ALLOWED_HOSTS"),
        unifiedPush: PushEndpointPolicy = PushEndpointPolicy(allowedHosts: [], allowedHostsSetting: "SECUREPUSH_UNIFIEDPUSH_ALLOWED_HOSTS")
    ) {
        self.webPush = webPush
        self.wns = wns
        self.unifiedPush = unifiedPush
    }

    /// The policy for `platform`'s tokens, `nil` for platforms whose tokens are not URLs (`Platform.tokenIsURL`;
    /// `PushEndpointPolicyTests` checks that every platform whose token is a URL has one here).
    public func policy(for platform: Platform) -> PushEndpointPolicy? {
        switch platform {
        case .webpush: webPush
        case .unifiedpush: unifiedPush
        case .wns: wns
        default: nil
        }
    }

    /// How a refused URL of `platform` is named in messages: `Web Push endpoint`, `WNS channel URI`; for a
    /// platform whose token is not a URL, `<platform> token`.
    public static func label(for platform: Platform) -> String {
        switch platform {
        case .wns: "WNS channel URI"
        case .webpush: "Web Push endpoint"
        case .unifiedpush: "UnifiedPush endpoint"
        default: "\(platform.rawValue) token"
        }
    }
}
