import Foundation
import SecurePushCore
import Testing

@testable import SecurePushDispatcher

@Suite("RecentAddresses: what a dispatcher remembers per push address")
struct RecentAddressesTests {
    static func target(_ device: UUID, _ token: String = "t") -> PushTarget {
        PushTarget(deviceID: device, platform: .webpush, token: token)
    }

    @Test("an address forgotten and remembered again counts from its new insertion, not its first")
    func reinsertedIsNewest() {
        let addresses = RecentAddresses<Int>(limit: 2)
        let (a, b, c) = (Self.target(UUID()), Self.target(UUID()), Self.target(UUID()))
        addresses.update(a) { $0 = 1 }
        addresses.update(b) { $0 = 2 }
        addresses.update(a) { $0 = nil }
        addresses.update(a) { $0 = 3 }
        addresses.update(c) { $0 = 4 }
        #expect(addresses.value(for: b) == nil, "b is now the oldest and goes")
        #expect(addresses.value(for: a) == 3 && addresses.value(for: c) == 4)
    }

    @Test("addresses that fail and then succeed, over and over, keep the memory bounded and the newest remembered")
    func churnStaysBounded() {
        let addresses = RecentAddresses<Int>(limit: 4)
        for round in 0..<10_000 {
            let target = Self.target(UUID())
            addresses.update(target) { $0 = round }
            addresses.update(target) { $0 = nil }
        }
        let kept = (0..<4).map { _ in Self.target(UUID()) }
        for (index, target) in kept.enumerated() { addresses.update(target) { $0 = index } }
        #expect(kept.enumerated().allSatisfy { addresses.value(for: $1) == $0 })
        #expect(addresses.storedSlots <= 3 * 4, "stale slots compacted")
    }
}
