import Foundation
import SecurePushCore
import SecurePushFakes
import SecurePushProviders
import Testing

/// A push that times out resets its HTTP/2 stream, and a push service closes a connection on which streams are
/// reset too often (its defence against rapid resets): every push in flight on it fails. Pushes to addresses
/// that failed lately (`Push.quarantined`) go on a connection apart, so a user whose endpoints hang cannot get
/// the connection that carries everybody else's pushes closed.
@Suite("Web Push: pushes of failing addresses on a connection apart")
struct WebPushQuarantineTests {
    static let resetLimit = 10

    @Test(
        "timed-out pushes get their connection closed, and only the quarantined one's when they are quarantined",
        arguments: [true, false])
    func resetsStayApart(quarantined: Bool) async throws {
        try await WebPushFixture.with(requestTimeout: .milliseconds(300), resetLimit: Self.resetLimit) { fixture in
            let healthy = fixture.fake.subscribe()
            let healthyPath = try #require(URL(string: healthy.endpoint)).path
            #expect(await fixture.provider.send(fixture.push(healthy)).kind == "sent")

            let hanging = (0..<(3 * Self.resetLimit)).map { _ in fixture.fake.subscribe() }
            for subscription in hanging { fixture.fake.script(subscription, .stall) }
            let provider = fixture.provider
            let pushes = hanging.map { subscription in
                var push = fixture.push(subscription)
                push.quarantined = quarantined
                return push
            }
            let timedOut = await TestSupport.sendConcurrently(pushes.count, through: provider) { pushes[$0] }
            #expect(timedOut.allSatisfy { $0.kind == "retry" })

            var healthyResults: [String] = []
            for _ in 0..<5 { healthyResults.append(await fixture.provider.send(fixture.push(healthy)).kind) }
            let healthyConnections = Set(fixture.fake.requests.filter { $0.path == healthyPath }.map(\.connectionID))
            let hangingConnections = Set(fixture.fake.requests.filter { $0.path != healthyPath }.map(\.connectionID))
            if quarantined {
                // The healthy device's connection saw none of the resets and was never closed: every push went out.
                #expect(healthyResults == Array(repeating: "sent", count: 5))
                #expect(healthyConnections.count == 1)
                #expect(healthyConnections.isDisjoint(with: hangingConnections))
            } else {
                // The control: the same resets on the shared connection got it closed (the fake enforces the
                // limit): a healthy push in flight on it failed, or the later ones needed a new connection.
                #expect(
                    healthyConnections.count >= 2 || healthyResults.contains { $0 != "sent" },
                    "connections \(healthyConnections), results \(healthyResults)")
            }
        }
    }
}
