import Foundation
import NIOCore
import NIOHTTP1
import SecurePushCore
import SecurePushTestSupport
import Testing

/// The per-user read rate holds under concurrency (issue 32, item 6): against the real binary, 32
/// connections reading as fast as they can get at most the burst plus the rate over the run (10 % slack).
/// Tokens taken only after each read let all concurrent requests through one token: 3× the rate.
@Suite("Read rate limits under concurrency, end to end", .serialized)
struct ReadRateTests {
    @Test("32 connections of one user's devices read within 10 % of SECUREPUSH_USER_READ_RATE; wrong secrets spend nothing")
    func userRateUnderConcurrency() async throws {
        let rate = 20.0
        let burst = 20
        let environment = [
            "SECUREPUSH_USER_READ_RATE": "\(Int(rate))", "SECUREPUSH_USER_READ_BURST": "\(burst)",
            "SECUREPUSH_DEVICE_READ_RATE": "10000", "SECUREPUSH_DEVICE_READ_BURST": "100000",
        ]
        try await DeliveryControlsTests.withServed(environment) { served in
            let devices = [
                try await served.register(user: "reader", token: "reader-1"), try await served.register(user: "reader", token: "reader-2"),
            ]
            // Each device once, one at a time: the server learns whose devices they are (a first sight is charged after the read).
            for device in devices {
                #expect(try await served.request(.GET, "/v1/notifications?limit=1", credential: device).status == 200)
            }
            // Wrong secrets for the same device ids: refused, and they give back what they took.
            for device in devices {
                let forged = String(device.split(separator: ".")[0]) + ".AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
                #expect(try await served.request(.GET, "/v1/notifications?limit=1", credential: forged).status == 401)
            }
            let clock = ContinuousClock()
            let start = clock.now
            let seconds = Duration.seconds(4)
            let statuses = try await withThrowingTaskGroup(of: [UInt].self) { group in
                for connection in 0..<32 {
                    group.addTask {
                        var seen: [UInt] = []
                        while clock.now - start < seconds {
                            seen.append(try await served.request(.GET, "/v1/notifications?limit=1", credential: devices[connection % 2]).status)
                        }
                        return seen
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            let elapsed = (clock.now - start).secondsDouble
            let served200 = statuses.filter { $0 == 200 }.count
            // What the buckets allow: the burst left after the two first reads, plus the rate over the run.
            let allowed = Double(burst - 2) + rate * elapsed
            #expect(Double(served200) <= allowed * 1.1, "\(served200) reads served in \(elapsed) s; the limit allows \(allowed)")
            #expect(Double(served200) >= allowed * 0.5, "the limit lets the rate through: \(served200) of \(allowed)")
            #expect(statuses.allSatisfy { $0 == 200 || $0 == 429 }, "only 200 and 429: \(Set(statuses))")
        }
    }
}
