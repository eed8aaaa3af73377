import Foundation
import HTTPTypes
import SecurePushCore
import Testing

@testable import SecurePushAPI

/// What of the failed-authentication throttle needs no database: its keys and its 429.
@Suite("Authentication throttle keys and 429")
struct AuthThrottleTests {
    @Test("a request is throttled by addr:<bucket of its client>, plus device:<bucket of the device id> when it names a device")
    func keys() throws {
        // Buckets are the first 4 hex digits of SHA-256 (`printf '198.51.100.7' | sha256sum`).
        #expect(AuthThrottle.keys(client: "198.51.100.7") == ["addr:e183"])
        // An IPv6 client counts as its /64 (`2001:db8::/64`): new source addresses in it are one key.
        #expect(AuthThrottle.keys(client: "2001:db8::1", deviceID: nil) == ["addr:b22e"])
        #expect(AuthThrottle.keys(client: "2001:db8:0:0:dead:beef:1:2") == AuthThrottle.keys(client: "2001:db8::7"))
        #expect(AuthThrottle.keys(client: "2001:db8:0:1::1") != AuthThrottle.keys(client: "2001:db8::1"))
        #expect(AuthThrottle.keys(client: "::ffff:198.51.100.7") == ["addr:1e73"])
        let id = try #require(UUID(uuidString: "0F8FAD5B-D9CB-469F-A165-70867728950E"))
        #expect(AuthThrottle.keys(client: "unknown", deviceID: id) == ["addr:b23a", "device:c812"])
    }

    @Test("a client with a new address (or a random device id) for every attempt makes at most 65,536 keys of each kind")
    func boundedKeys() {
        var addresses = Set<String>()
        var devices = Set<String>()
        for index in 0..<400_000 {
            let keys = AuthThrottle.keys(client: "10.\(index >> 16 & 255).\(index >> 8 & 255).\(index & 255)", deviceID: UUID())
            addresses.insert(keys[0])
            devices.insert(keys[1])
        }
        #expect(addresses.count <= AuthThrottle.buckets && devices.count <= AuthThrottle.buckets)
        #expect(addresses.count > 60_000, "the buckets are used evenly: \(addresses.count)")
    }

    @Test("the client's key is the resolved address, so a spoofed X-Forwarded-For does not change it")
    func keyOfResolvedAddress() throws {
        let client = ClientAddress.resolve(peer: nil, forwardedFor: "198.51.100.7", trustedProxies: .none)
        #expect(AuthThrottle.keys(client: client) == AuthThrottle.keys(client: "unknown"))
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
