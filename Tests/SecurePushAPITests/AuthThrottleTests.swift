import Foundation
import HTTPTypes
import Testing

@testable import SecurePushAPI

/// What of the failed-authentication throttle needs no database: its keys and its 429.
@Suite("Authentication throttle keys and 429")
struct AuthThrottleTests {
    @Test("a request is throttled by addr:<client>, plus device:<lowercase uuid> when it names a device")
    func keys() throws {
        #expect(AuthThrottle.keys(client: "198.51.100.7") == ["addr:198.51.100.7"])
        // An IPv6 client counts as its /64: new source addresses in it are one key, bounding the throttle rows.
        #expect(AuthThrottle.keys(client: "2001:db8::1", deviceID: nil) == ["addr:2001:db8::/64"])
        #expect(AuthThrottle.keys(client: "2001:db8:0:0:dead:beef:1:2") == AuthThrottle.keys(client: "2001:db8::7"))
        #expect(AuthThrottle.keys(client: "2001:db8:0:1::1") != AuthThrottle.keys(client: "2001:db8::1"))
        #expect(AuthThrottle.keys(client: "::ffff:198.51.100.7") == ["addr:::ffff:198.51.100.7"])
        let id = try #require(UUID(uuidString: "0F8FAD5B-D9CB-469F-A165-70867728950E"))
        #expect(AuthThrottle.keys(client: "unknown", deviceID: id) == ["addr:unknown", "device:0f8fad5b-d9cb-469f-a165-70867728950e"])
    }

    @Test("the client's key is the resolved address, so a spoofed X-Forwarded-For does not change it")
    func keyOfResolvedAddress() throws {
        let client = ClientAddress.resolve(peer: nil, forwardedFor: "198.51.100.7", trustedProxies: .none)
        #expect(AuthThrottle.keys(client: client) == ["addr:unknown"])
    }

    @Test(
        "429 too_many_requests carries Retry-After in whole seconds, rounded up, at least 1, at most a day",
        arguments: [
            (0, "1"), (-5, "1"), (0.001, "1"), (1, "1"), (1.2, "2"), (899.5, "900"), (1e30, "86400"), (.infinity, "86400"), (.nan, "86400"),
        ] as [(Double, String)]
    )
    func retryAfter(seconds: Double, header: String) {
        let error = APIError.tooManyRequests(retryAfter: seconds, "Too many failed attempts; retry later.")
        #expect(error.status == .tooManyRequests)
        #expect(error.code == .tooManyRequests)
        #expect(error.headers[.retryAfter] == header)
        #expect(error.message == "Too many failed attempts; retry later.")
    }
}
