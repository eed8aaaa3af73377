import Foundation
import SecurePushCore
import SecurePushProviders
import SecurePushRelayProtocol
import Testing

/// Issue 45: a number from a wire never ends a process. A relay push out of range is refused field by field,
/// and the envelopes turn any expiry into headers without trapping.
@Suite("Relay push limits and saturating envelopes")
struct RelayPushLimitsTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// A valid APNs relay push expiring in an hour; `change` breaks one field.
    static func relayPush(_ change: (inout RelayPush) -> Void = { _ in }) -> RelayPush {
        var push = RelayPush(
            Push(
                notificationID: NotificationID(UUID()),
                target: PushTarget(deviceID: UUID(), platform: .apns, token: String(repeating: "ab", count: 32)),
                expiresAt: now.addingTimeInterval(3600)))
        push.expires = Int64(now.timeIntervalSince1970) + 3600
        change(&push)
        return push
    }

    /// Each out-of-range field, and the word its refusal names.
    static let outOfRange: [(String, @Sendable (inout RelayPush) -> Void)] = [
        ("expires", { $0.expires = .max }), ("expires", { $0.expires = .min }), ("expires", { $0.expires = 0 }),
        ("expires", { $0.expires = Int64(now.timeIntervalSince1970) + 400 * 86_400 }),
        ("priority", { $0.priority = .max }), ("priority", { $0.priority = Int(Int16.min) - 1 }),
        ("attempt", { $0.attempt = .max }), ("attempt", { $0.attempt = -1 }),
        ("badge", { $0.badge = .max }), ("badge", { $0.badge = -1 }),
        ("clear", { $0.clear = [] }), ("clear", { $0.clear = (0..<101).map { _ in UUID() } }),
        ("option", { $0.options = ["project": "x"] }), ("option", { $0.options = ["environment": "staging"] }),
        ("option", { $0.options = ["topic": String(repeating: "a", count: 600)] }),
        ("option", { $0.options = ["topic": "com.example/../x"] }),
        (
            "option",
            {
                $0.platform = "fcm"; $0.token = String(repeating: "t", count: 40); $0.options = ["project": "../../v1/other"]
            }
        ),
        (
            "option",
            {
                $0.platform = "fcm"; $0.token = String(repeating: "t", count: 40); $0.options = ["project": "a/b"]
            }
        ),
        // Issue 48: tokens no platform issues (a CR/LF header injection among them) are refused, never relayed.
        ("token", { $0.token = String(repeating: "ab", count: 16) + "\r\nx-injected: 1" }),
        ("token", { $0.token = String(repeating: "zz", count: 32) }), ("token", { $0.token = String(repeating: "a", count: 33) }),
        ("token", { $0.token = "" }), ("token", { $0.token = String(repeating: "ab", count: 2_049) }),
        (
            "token",
            {
                $0.platform = "fcm"; $0.token = "short"
            }
        ),
        (
            "token",
            {
                $0.platform = "fcm"; $0.token = String(repeating: "t", count: 30) + " x"
            }
        ),
        (
            "token",
            {
                $0.platform = "wns"; $0.token = "http://db5.notify.windows.com/?token=x"
            }
        ),
        (
            "token",
            {
                $0.platform = "wns"; $0.token = "https://db5.notify.windows.com"
            }
        ),
    ]

    @Test("every out-of-range field is refused with a message that names it", arguments: outOfRange.indices)
    func refused(_ index: Int) throws {
        let (field, change) = Self.outOfRange[index]
        let error = #expect(throws: RelayWireError.self) { try Self.relayPush(change).push(now: Self.now) }
        #expect(error?.description.contains(field) == true, "\(error?.description ?? "")")
    }

    @Test("the limits keep what a self-hosted server sends: its options, a past expiry within a day, a clear of 20, priorities and badges")
    func accepted() throws {
        _ = try Self.relayPush().push(now: Self.now)
        _ = try Self.relayPush {
            $0.platform = "fcm"; $0.token = "fcm:APA91b-Ab_cD.ef" + String(repeating: "x", count: 140)
        }.push(now: Self.now)
        _ = try Self.relayPush {
            $0.platform = "wns"; $0.token = "https://db5.notify.windows.com/?token=AwYAAAB%2bq"
        }.push(now: Self.now)
        _ = try Self.relayPush { $0.options = ["environment": "sandbox", "push_style": "silent", "topic": "com.example.app"] }.push(now: Self.now)
        _ = try Self.relayPush { $0.expires = Int64(Self.now.timeIntervalSince1970) - 3600 }.push(now: Self.now)
        _ = try Self.relayPush { $0.clear = (0..<20).map { _ in UUID() } }.push(now: Self.now)
        _ = try Self.relayPush {
            $0.priority = -100; $0.badge = 99_999; $0.attempt = 100
        }.push(now: Self.now)
        _ = try Self.relayPush {
            $0.platform = "fcm"
            $0.token = String(repeating: "t", count: 40)
            $0.options = ["project": "securepush-test"]
        }.push(now: Self.now)
        _ = try Self.relayPush {
            $0.platform = "fcm"
            $0.token = String(repeating: "t", count: 40)
            $0.options = ["project": "example.com:legacy-project"]
        }.push(now: Self.now)
    }

    @Test("a self-hosted notification that lives for ten years is relayed with a year's TTL, not refused")
    func longLivedClamped() throws {
        let push = Push(
            notificationID: NotificationID(UUID()), target: PushTarget(deviceID: UUID(), platform: .apns, token: String(repeating: "ab", count: 32)),
            expiresAt: Date().addingTimeInterval(10 * 365 * 86_400))
        _ = try RelayPush(push).push()
        _ = try RelayPush(Push(notificationID: push.notificationID, target: push.target, expiresAt: .distantFuture)).push()
    }

    @Test("every envelope turns an expiry at the ends of time into headers without trapping")
    func saturatingEnvelopes() {
        let target = PushTarget(deviceID: UUID(), platform: .apns, token: String(repeating: "ab", count: 32))
        for expiry in [Date(timeIntervalSince1970: 9.3e18), Date(timeIntervalSince1970: -9.3e18), .distantFuture, .distantPast] {
            let push = Push(notificationID: NotificationID(UUID()), target: target, expiresAt: expiry)
            let apns = APNsEnvelope().request(for: push)
            #expect(apns.header("apns-expiration").flatMap(Int.init).map { $0 >= 0 } == true)
            #expect(WNSEnvelope().request(for: push).header("x-wns-ttl").flatMap(Int.init).map { $0 >= 0 } == true)
            #expect(WebPushEnvelope(navigateURL: "https://example.com/").request(for: push).header("ttl").flatMap(Int.init) != nil)
            #expect(!FCMEnvelope(defaultProject: "p").request(for: push).body.isEmpty)
        }
        #expect(Int(saturating: .nan) == 0 && Int(saturating: .infinity) == .max && Int(saturating: -.infinity) == .min)
        #expect(Int(saturating: 1.9) == 1 && Int(saturating: -1.1) == -2)
    }
}
