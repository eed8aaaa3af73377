import Foundation
import SecurePushCore
import Testing

@testable import SecurePushDispatcher

@Suite("Failing push addresses paused by a dispatcher")
struct FailingDevicesTests {
    static let failure = PushResult.retry(after: nil, reason: "500", scope: .provider)

    @Test("three failures in a row pause an address for 1 s, doubling with each further one; a success forgets it")
    func pausesAndForgets() {
        let devices = FailingDevices()
        let target = PushTarget(deviceID: UUID(), platform: .webpush, token: "https://push.example/a")
        let now = ContinuousClock.now
        #expect(!devices.standing(of: target, at: now).failed)
        devices.record(target, Self.failure, at: now)
        #expect(devices.standing(of: target, at: now).failed, "one failure quarantines its next push")
        devices.record(target, Self.failure, at: now)
        #expect(devices.pause(of: target, at: now) == nil, "two failures pause nothing")
        devices.record(target, Self.failure, at: now)
        #expect(devices.pause(of: target, at: now) == .seconds(1))
        #expect(devices.pause(of: target, at: now + .seconds(1)) == nil, "the pause ends")
        devices.record(target, Self.failure, at: now)
        #expect(devices.pause(of: target, at: now) == .seconds(2))
        devices.record(target, .sent(messageID: nil), at: now)
        #expect(devices.pause(of: target, at: now) == nil, "a success forgets the address")
        #expect(!devices.standing(of: target, at: now).failed)
        let other = PushTarget(deviceID: target.deviceID, platform: .webpush, token: "https://push.example/b")
        #expect(devices.pause(of: other, at: now) == nil)
    }

    @Test("a device's own trouble (a per-device throttle, a dead token) pauses nothing; the oldest addresses go past the limit")
    func deviceScopeAndLimit() {
        let devices = FailingDevices(limit: 2)
        let now = ContinuousClock.now
        let targets = (0..<3).map { PushTarget(deviceID: UUID(), platform: .webpush, token: "t\($0)") }
        for _ in 0..<5 { devices.record(targets[0], .retry(after: nil, reason: "429 for this device", scope: .device), at: now) }
        #expect(devices.pause(of: targets[0], at: now) == nil)
        #expect(!devices.standing(of: targets[0], at: now).failed)
        for target in targets { for _ in 0..<3 { devices.record(target, Self.failure, at: now) } }
        #expect(devices.pause(of: targets[0], at: now) == nil, "forgotten past the limit")
        #expect(devices.pause(of: targets[2], at: now) == .seconds(1))
    }
}
