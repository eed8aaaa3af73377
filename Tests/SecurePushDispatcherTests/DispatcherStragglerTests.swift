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

    @Test("while sends that never answer are in flight, every other push (claimed with them or later) goes out")
    func slowSendsHoldNoLane() async throws {
        let queue = InMemoryDeliveryQueue()
        let gate = Gate()
        let provider = gate.provider()
        // Two users' slow endpoints, claimed in the same batches as everybody else's pushes.
        var slow: [UUID] = []
        var fast: [String] = []
        for index in 0..<12 {
            slow.append(queue.add(token: "slow-\(index)", user: index.isMultiple(of: 2) ? "mallory" : "trudy"))
            for other in 0..<3 {
                fast.append("fast-\(index)-\(other)")
                queue.add(token: fast.last, user: "user-\(index)-\(other)")
            }
        }
        let (slowIDs, fastTokens) = (slow, fast)
        let later = (0..<40).map { "later-\($0)" }
        let configuration = DispatcherLaneTests.configuration(concurrency: 8, batchSize: 8)
        try await DispatcherLaneTests.withDispatcher(queue: queue, providers: [provider], configuration: configuration) { _, _ in
            try await DispatcherLaneTests.eventually("the first pushes sent") { gate.sent.count == fastTokens.count }
            // Later pushes, claimed while the slow ones hang.
            for token in later { queue.add(token: token, user: "late-\(token)") }
            try await DispatcherLaneTests.eventually("the later pushes sent") { gate.sent.isSuperset(of: later) }
            // The slow sends still hang: at most a quarter of each lane's 8 per user, 2 users, 2 lanes; the rest held back.
            #expect(provider.inFlight > 0)
            #expect(provider.inFlight <= 2 * 2 * 2)
            #expect(slowIDs.contains { queue.row($0)?.releases ?? 0 > 0 }, "a user over his bound is held back")
            gate.open()
            try await DispatcherLaneTests.eventually("every delivery finished") {
                queue.finished.count == slowIDs.count + fastTokens.count + later.count
            }
        }
        for id in slow {
            #expect(queue.finished[id] == .sent(messageID: "m"))
            #expect(queue.row(id)?.delivery.push.attempt == 1, "held back by the user's bound without spending an attempt")
        }
        #expect(provider.maxInFlight <= 8 * 2, "at most `concurrency` per lane, across its batches")
    }
}
