import SecurePushCore
import Testing

@Suite("UnifiedPush endpoints")
struct UnifiedPushPolicyTests {
    @Test("no distributor is allowed by default: the operator names the ones it trusts, https only")
    func allowlistFirst() throws {
        let defaults = try #require(PushEndpointPolicies().policy(for: .unifiedpush))
        #expect(throws: PushEndpointRefusal.self) { try defaults.check("https://ntfy.sh/upAbc123") }
        #expect(throws: PushEndpointRefusal.self) { try defaults.check("https://fcm.googleapis.com/fcm/send/x") }
        let trusted = PushEndpointPolicy(allowedHosts: ["ntfy.example.org"], allowedHostsSetting: "SECUREPUSH_UNIFIEDPUSH_ALLOWED_HOSTS")
        let policies = PushEndpointPolicies(unifiedPush: trusted)
        let policy = try #require(policies.policy(for: .unifiedpush))
        #expect(try policy.check("https://ntfy.example.org/upAbc123").host == "ntfy.example.org")
        #expect(throws: PushEndpointRefusal.self) { try policy.check("http://ntfy.example.org/upAbc123") }
        #expect(throws: PushEndpointRefusal.self) { try policy.check("https://10.0.0.5/upAbc123") }
        #expect(policies.policy(for: .webpush)?.isAllowedHost("ntfy.example.org") == false, "Web Push keeps its own list")
        #expect(Platform.unifiedpush.tokenIsURL && Platform.unifiedpush.sealsItsOwnMessage)
        #expect(PushEndpointPolicies.label(for: .unifiedpush) == "UnifiedPush endpoint")
    }
}
