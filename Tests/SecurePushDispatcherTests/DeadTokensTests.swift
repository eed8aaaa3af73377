import Foundation
import SecurePushCore
import Testing

@testable import SecurePushDispatcher

@Suite("Dead tokens remembered by a dispatcher")
struct DeadTokensTests {
    static func target(_ device: UUID, _ token: String) -> PushTarget {
        PushTarget(deviceID: device, platform: .simulated, token: token)
    }

    @Test("a dead (device, token) is remembered; the same device with a new token is not; the oldest go past the limit")
    func remembers() {
        let tokens = DeadTokens(limit: 2)
        let device = UUID()
        tokens.insert(Self.target(device, "old"))
        #expect(tokens.contains(Self.target(device, "old")))
        #expect(!tokens.contains(Self.target(device, "new")), "a device that registered a new address is pushed again")
        #expect(!tokens.contains(Self.target(UUID(), "old")))
        let (second, third) = (UUID(), UUID())
        tokens.insert(Self.target(second, "b"))
        tokens.insert(Self.target(third, "c"))
        #expect(!tokens.contains(Self.target(device, "old")), "the oldest is forgotten past the limit")
        #expect(tokens.contains(Self.target(second, "b")) && tokens.contains(Self.target(third, "c")))
    }
}
