import Crypto
import Foundation
import NIOConcurrencyHelpers
import SecurePushFakes
import Testing

@testable import SecurePushProviders

@Suite("APNs provider token cache")
struct APNsTokenCacheTests {
    final class Clock: Sendable {
        let now = NIOLockedValueBox(Date(timeIntervalSince1970: 1_800_000_000))
        func advance(_ seconds: TimeInterval) { now.withLockedValue { $0 = $0.addingTimeInterval(seconds) } }
    }

    @Test("one token per (team, key), renewed after its lifetime, iat as a number")
    func lifetime() throws {
        let clock = Clock()
        let cache = APNsTokenCache(lifetime: .seconds(50 * 60)) { clock.now.withLockedValue { $0 } }
        let key = P256.Signing.PrivateKey()
        let app = APNsConfiguration.App(topic: "a", teamID: "TEAM000001", keyID: "KEY0000001", key: key)
        let sameTeamOtherApp = APNsConfiguration.App(topic: "b", teamID: "TEAM000001", keyID: "KEY0000001", key: key)
        let otherKey = APNsConfiguration.App(topic: "c", teamID: "TEAM000001", keyID: "KEY0000002", key: P256.Signing.PrivateKey())

        let first = try cache.token(for: app)
        #expect(try cache.token(for: sameTeamOtherApp) == first)
        #expect(try cache.token(for: otherKey) != first)
        clock.advance(49 * 60)
        #expect(try cache.token(for: app) == first)
        clock.advance(2 * 60)
        let renewed = try cache.token(for: app)
        #expect(renewed != first)
        let jwt = try #require(CompactJWTReader(renewed))
        #expect(jwt.number("iat") == Double(1_800_000_000 + 51 * 60))
        #expect(jwt.verifiesES256(with: key.publicKey))

        // Invalidating a token that was already replaced does not throw the new one away.
        cache.invalidate(first, for: app)
        #expect(try cache.token(for: app) == renewed)
        cache.invalidate(renewed, for: app)
        #expect(try cache.token(for: app) != renewed)
    }

    @Test("the configured lifetime is kept within APNs' 20–60 minutes")
    func clamped() {
        let app = APNsConfiguration.App(topic: "a", teamID: "T", keyID: "K", key: P256.Signing.PrivateKey())
        #expect(APNsConfiguration(apps: [app], tokenLifetime: .seconds(5)).tokenLifetime == .seconds(20 * 60))
        #expect(APNsConfiguration(apps: [app], tokenLifetime: .seconds(7200)).tokenLifetime == .seconds(60 * 60))
    }
}
