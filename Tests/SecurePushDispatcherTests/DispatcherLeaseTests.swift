import Foundation
import SecurePushCore
import SecurePushDispatcher
import Synchronization
import Testing

/// A dispatcher never sends from a lease it may have lost (paused past its lease, then resumed).
@Suite("Dispatcher lease deadline")
struct DispatcherLeaseTests {
    static func configuration(lease: Duration) -> DispatcherConfiguration {
        var configuration = DispatcherLaneTests.configuration(concurrency: 1, batchSize: 5, grace: .seconds(30))
        configuration.lanes = 1
        configuration.leaseDuration = lease
        return configuration
    }

    @Test("a send outliving the lease is cancelled, and nothing else is sent from that lease")
    func sendOutlivesLease() async throws {
        let queue = InMemoryDeliveryQueue()
        let ids = (0..<5).map { _ in queue.add() }
        let first = ids[0]
        let seen = SlowFirstSend()
        let provider = ScriptedProvider { push in
            // The first send of all is slow: it would answer 20 s later, long after the 300 ms lease (the
            // lease deadline cancels it; the margin holds even when a loaded machine delays that timer).
            guard seen.sends.add(1, ordering: .relaxed).oldValue == 0 else { return .sent(messageID: "m") }
            do {
                try await Task.sleep(for: .seconds(20))
                return .sent(messageID: "late")
            } catch {
                seen.cancelled.store(true, ordering: .relaxed)
                return .retry(after: nil, reason: "cancelled")
            }
        }
        try await DispatcherLaneTests.withDispatcher(
            queue: queue, providers: [provider], configuration: Self.configuration(lease: .milliseconds(300))
        ) {
            _, _ in
            // The first delivery is sent on its second claim; the first batch was fully handled before that claim.
            try await DispatcherLaneTests.eventually("the first delivery finished") { queue.finished[first] != nil }
        }
        let cancelled = seen.cancelled.load(ordering: .relaxed)
        #expect(cancelled, "the send in flight at the lease deadline was cancelled")
        #expect(queue.finished[first] == .sent(messageID: "m"))
        #expect(queue.row(first)?.delivery.push.attempt == 2, "the cancelled send was written as a retry")
        #expect(provider.started == 2, "the other four were never sent from the lost lease")
        for id in ids.dropFirst() {
            let row = queue.row(id)
            #expect(row?.outcome == nil)
            #expect(row?.pending == false, "abandoned, not released: the lease is lost and rescue returns them")
            #expect(row?.delivery.push.attempt == 1)
        }
    }

    @Test("a claim that returns after its lease is over sends nothing")
    func claimReturnsLate() async throws {
        let inner = InMemoryDeliveryQueue()
        let ids = (0..<5).map { _ in inner.add() }
        // As if the process was paused between the claim statement and its answer.
        let queue = SlowFirstClaimQueue(inner: inner, pause: .milliseconds(400))
        let provider = ScriptedProvider()
        try await DispatcherLaneTests.withDispatcher(
            queue: queue, providers: [provider], configuration: Self.configuration(lease: .milliseconds(300))
        ) {
            _, _ in
            try await DispatcherLaneTests.eventually("the late batch's outcomes were written") { queue.completeCalls >= 1 }
        }
        #expect(provider.started == 0)
        for id in ids {
            #expect(inner.row(id)?.pending == false, "left claimed for lease rescue")
            #expect(inner.row(id)?.outcome == nil)
        }
    }
}

/// What the scripted provider of `sendOutlivesLease` saw.
final class SlowFirstSend: Sendable {
    let sends = Atomic<Int>(0)
    let cancelled = Atomic<Bool>(false)
}

/// Answers the first claim only after `pause` (the claim itself is made at once), then behaves as `inner`.
final class SlowFirstClaimQueue: DeliveryQueue {
    let inner: InMemoryDeliveryQueue
    let pause: Duration
    private let claims = Atomic<Int>(0)
    private let completes = Atomic<Int>(0)

    init(inner: InMemoryDeliveryQueue, pause: Duration) {
        self.inner = inner
        self.pause = pause
    }

    /// How many times `complete` was called.
    var completeCalls: Int { completes.load(ordering: .relaxed) }

    func claim(limit: Int, platforms: [Platform], lease: Duration, worker: UUID) async throws -> ClaimedBatch {
        let batch = try await inner.claim(limit: limit, platforms: platforms, lease: lease, worker: worker)
        if claims.add(1, ordering: .relaxed).oldValue == 0 {
            try await Task.sleep(for: pause)
        }
        return batch
    }

    func complete(_ completions: [DeliveryCompletion], leaseToken: UUID) async throws -> Int {
        completes.add(1, ordering: .relaxed)
        return try await inner.complete(completions, leaseToken: leaseToken)
    }

    func release(_ deliveryIDs: [UUID], leaseToken: UUID, delay: Duration) async throws -> Int {
        try await inner.release(deliveryIDs, leaseToken: leaseToken, delay: delay)
    }
}
