import Foundation
import NIOConcurrencyHelpers
import SecurePushCore
import SecurePushDispatcher
import Testing

/// A slow endpoint holds its own push, never its lane (issue 32): against the in-memory queue.
@Suite("Dispatcher stragglers")
struct DispatcherStragglerTests {
    /// Sends to tokens starting with `slow` hang until the test opens the gate (no timer stands in for it);
    /// every other send answers at once and is recorded.
    final class Gate: Sendable {
        private let state = NIOLockedValueBox<(open: Bool, waiters: [CheckedContinuation<Void, Never>], sent: Set<String>)>((false, [], []))

        func provider() -> ScriptedProvider {
            ScriptedProvider { push in
                if push.target.token.hasPrefix("slow") {
                    await self.wait()
                } else {
                    self.state.withLockedValue { _ = $0.sent.insert(push.target.token) }
                }
                return .sent(messageID: "m")
            }
        }

        var sent: Set<String> { state.withLockedValue { $0.sent } }

        private func wait() async {
            await withCheckedContinuation { continuation in
                let resume = state.withLockedValue { state in
                    if state.open { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if resume { continuation.resume() }
            }
        }

        func open() {
            let waiters = state.withLockedValue { state in
                state.open = true
                defer { state.waiters.removeAll() }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    @Test("while sends that never answer are in flight, every other push (claimed with them or later) goes out; one user holds at most his share")
    func slowSendsHoldNoLane() async throws {
        let queue = InMemoryDeliveryQueue()
        let gate = Gate()
        let provider = gate.provider()
        // One user's 30 endpoints that never answer, claimed in the same batches as everybody else's pushes.
        var slow: [UUID] = []
        var fast: [String] = []
        for index in 0..<30 {
            slow.append(queue.add(token: "slow-\(index)", user: "mallory"))
            for other in 0..<2 {
                fast.append("fast-\(index)-\(other)")
                queue.add(token: fast.last, user: "user-\(index)-\(other)")
            }
        }
        let (slowIDs, fastTokens) = (slow, fast)
        let later = (0..<40).map { "later-\($0)" }
        // 40 sends per lane, a quarter (10) per user: mallory holds at most 20 of the 80 slots of two lanes.
        let configuration = DispatcherLaneTests.configuration(concurrency: 40, batchSize: 25)
        #expect(Dispatcher.perUserLimit(concurrency: 40) == 10)
        try await DispatcherLaneTests.withDispatcher(queue: queue, providers: [provider], configuration: configuration) { _, _ in
            try await DispatcherLaneTests.eventually("the first pushes sent") { gate.sent.count == fastTokens.count }
            // Later pushes, claimed while the slow ones hang.
            for token in later { queue.add(token: token, user: "late-\(token)") }
            try await DispatcherLaneTests.eventually("the later pushes sent") { gate.sent.isSuperset(of: later) }
            #expect(provider.inFlight > 0)
            #expect(provider.inFlight <= 10 * 2, "at most a quarter of each lane for one user: \(provider.inFlight) in flight")
            gate.open()
            try await DispatcherLaneTests.eventually("every delivery finished") {
                queue.finished.count == slowIDs.count + fastTokens.count + later.count
            }
        }
        for id in slow {
            #expect(queue.finished[id] == .sent(messageID: "m"))
            #expect(queue.row(id)?.delivery.push.attempt == 1, "waited in its batch without spending an attempt")
        }
        #expect(provider.maxInFlight <= 40 * 2, "at most `concurrency` per lane, across its batches")
    }
}
