import Foundation
import NIOConcurrencyHelpers
import SecurePushCore
import SecurePushDispatcher
import Synchronization
import Testing

/// The dispatcher's circuit breakers against the in-memory queue: provider failures open a breaker,
/// sends stop, deliveries go back unsent without an attempt, and a successful probe closes it.
@Suite("Dispatcher circuit breakers")
struct DispatcherCircuitTests {
    static func configuration(failures: Int = 3, open: Duration = .milliseconds(500)) -> DispatcherConfiguration {
        var configuration = DispatcherLaneTests.configuration(concurrency: 1, batchSize: 20)
        configuration.lanes = 1
        configuration.retry = RetryPolicy(maxAttempts: 10, baseDelay: .milliseconds(1), maxDelay: .milliseconds(5), jitter: 0)
        configuration.circuitBreaker = CircuitBreakerPolicy(consecutiveFailures: failures, openDuration: open)
        return configuration
    }

    /// Answers `.retry` (a provider failure, or a per-device one) for the first `failing` sends matching
    /// `fails`, then accepts; records what the dispatcher's breakers showed at each later send.
    final class Storm: Sendable {
        let failing: Int
        let scope: FailureScope
        let retryAfter: Duration?
        let failed = Atomic<Int>(0)
        let seenDuringSends = NIOLockedValueBox<[[CircuitSnapshot]]>([])
        let dispatcher = NIOLockedValueBox<Dispatcher?>(nil)

        init(failing: Int, scope: FailureScope = .provider, retryAfter: Duration? = nil) {
            self.failing = failing
            self.scope = scope
            self.retryAfter = retryAfter
        }

        func answer(_ push: Push, fails: Bool = true) -> PushResult {
            if fails, failed.add(1, ordering: .relaxed).oldValue < failing {
                return .retry(after: retryAfter, reason: "503 ServiceUnavailable", scope: scope)
            }
            if let dispatcher = dispatcher.withLockedValue({ $0 }) {
                let snapshots = dispatcher.breakers.snapshots()
                seenDuringSends.withLockedValue { $0.append(snapshots) }
            }
            return .sent(messageID: "m")
        }
    }

    /// Every delivery's attempts equal the sends the provider saw for it: the breaker burnt none.
    static func expectNoAttemptBurnt(_ queue: InMemoryDeliveryQueue, _ ids: [UUID], _ provider: ScriptedProvider) {
        for id in ids {
            guard let row = queue.row(id) else { continue }
            #expect(row.delivery.push.attempt == provider.sends(of: row.delivery.push.notificationID), "attempts == sends for \(id)")
        }
    }

    @Test("provider failures open a platform's breaker: no claims, no sends, released unsent without an attempt; a probe closes it")
    func platformBreaker() async throws {
        let queue = InMemoryDeliveryQueue()
        let storm = Storm(failing: 3)
        let provider = ScriptedProvider { storm.answer($0) }
        let healthy = ScriptedProvider(platform: .fcm)
        let added = NIOLockedValueBox<[UUID]>([])
        try await DispatcherLaneTests.withDispatcher(queue: queue, providers: [provider, healthy], configuration: Self.configuration()) {
            dispatcher, _ in
            storm.dispatcher.withLockedValue { $0 = dispatcher }
            // Added once the storm can see the dispatcher: the queue was empty until now. The ten arrive together
            // (one claim takes them all, as one committed statement's rows), however slowly the lane runs.
            let ids = queue.add(count: 10) + [queue.add(platform: .fcm)]
            added.withLockedValue { $0 = ids }
            try await DispatcherLaneTests.eventually("all sent") { queue.finished.count == ids.count }
            #expect(dispatcher.breakers.snapshots().isEmpty, "closed again")
        }
        let ids = added.withLockedValue { $0 }
        #expect(provider.started == 13, "3 failures, then each delivery once: nothing was sent while the breaker was open")
        let simulated = Array(ids.prefix(10))
        for id in simulated {
            #expect(queue.finished[id] == .sent(messageID: "m"))
        }
        // The three failures are retries (one attempt each); the other seven were released unsent, once.
        for id in simulated.prefix(3) {
            #expect(queue.row(id)?.delivery.push.attempt == 2)
            #expect(queue.row(id)?.releases == 0)
        }
        for id in simulated.dropFirst(3) {
            let row = queue.row(id)
            #expect(row?.delivery.push.attempt == 1)
            #expect(row?.releases == 1)
            let delay = row?.lastReleaseDelay ?? .zero
            #expect(delay > .zero && delay <= .milliseconds(500), "released until the breaker lets probes through: \(delay)")
        }
        Self.expectNoAttemptBurnt(queue, simulated, provider)
        // While open the platform was left out of the claims; the healthy one was still claimed.
        #expect(queue.claimedPlatforms.contains([.fcm]))
        #expect(queue.finished[ids[10]] == .sent(messageID: nil))
        // The first send after the storm was the probe, seen while half-open.
        let first = storm.seenDuringSends.withLockedValue { $0.first }
        #expect(first == [CircuitSnapshot(platform: "simulated", host: nil, state: .halfOpen, openUntil: nil)])
    }

    @Test("Web Push breakers are per push service: a failing service's deliveries wait (whatever subdomain), another service's go out")
    func perHost() async throws {
        let queue = InMemoryDeliveryQueue()
        let storm = Storm(failing: 3)
        let provider = ScriptedProvider(platform: .webpush) { push in
            storm.answer(push, fails: push.target.token.contains(".failing.example/"))
        }
        // Each device has its own subdomain; the breaker is the allowlist entry's.
        let failing = (0..<5).map { queue.add(platform: .webpush, token: "https://d\($0).failing.example/push/\($0)") }
        let healthy = (0..<5).map { queue.add(platform: .webpush, token: "https://d\($0).healthy.example/push/\($0)") }
        var configuration = Self.configuration()
        configuration.endpointPolicies.webPush = PushEndpointPolicy(
            allowedHosts: ["failing.example", "healthy.example"], allowedHostsSetting: "SECUREPUSH_WEBPUSH_ALLOWED_HOSTS")
        try await DispatcherLaneTests.withDispatcher(queue: queue, providers: [provider], configuration: configuration) { dispatcher, _ in
            storm.dispatcher.withLockedValue { $0 = dispatcher }
            try await DispatcherLaneTests.eventually("all sent") { queue.finished.count == 10 }
        }
        for id in healthy {
            #expect(queue.row(id)?.delivery.push.attempt == 1)
            #expect(queue.row(id)?.releases == 0, "another host's breaker does not hold it back")
        }
        for id in failing.dropFirst(3) {
            #expect(queue.row(id)?.releases == 1)
            #expect(queue.row(id)?.delivery.push.attempt == 1)
        }
        #expect(queue.claimedPlatforms.allSatisfy { $0 == [.webpush] }, "a host's breaker never stops the platform's claims")
        Self.expectNoAttemptBurnt(queue, failing + healthy, provider)
    }

    @Test("a platform-wide throttle's Retry-After opens the breaker at once, at least until then")
    func retryAfter() async throws {
        let queue = InMemoryDeliveryQueue()
        let storm = Storm(failing: 1, retryAfter: .milliseconds(800))
        let provider = ScriptedProvider { storm.answer($0) }
        let ids = (0..<4).map { _ in queue.add() }
        try await DispatcherLaneTests.withDispatcher(
            queue: queue, providers: [provider], configuration: Self.configuration(failures: 5, open: .milliseconds(100))
        ) { _, _ in
            try await DispatcherLaneTests.eventually("all sent") { queue.finished.count == ids.count }
        }
        #expect(provider.started == 5)
        for id in ids.dropFirst() {
            let delay = queue.row(id)?.lastReleaseDelay ?? .zero
            #expect(delay > .milliseconds(100) && delay <= .milliseconds(800), "held back for the Retry-After, not the 100 ms open time: \(delay)")
        }
        let first = queue.row(ids[0])
        // The throttled push itself is retried no sooner than the Retry-After, by the retry policy.
        #expect(first?.delivery.push.attempt == 2)
        Self.expectNoAttemptBurnt(queue, ids, provider)
    }

    @Test("per-device failures never open a breaker")
    func perDeviceFailures() async throws {
        let queue = InMemoryDeliveryQueue()
        let storm = Storm(failing: 10, scope: .device)
        let provider = ScriptedProvider { storm.answer($0) }
        let ids = (0..<10).map { _ in queue.add() }
        try await DispatcherLaneTests.withDispatcher(queue: queue, providers: [provider], configuration: Self.configuration()) { dispatcher, _ in
            storm.dispatcher.withLockedValue { $0 = dispatcher }
            try await DispatcherLaneTests.eventually("all sent") { queue.finished.count == ids.count }
        }
        for id in ids {
            #expect(queue.row(id)?.releases == 0)
            #expect(queue.row(id)?.delivery.push.attempt == 2)
        }
        #expect(storm.seenDuringSends.withLockedValue { $0.allSatisfy(\.isEmpty) })
    }

    @Test("a push to an address whose last push failed as a service's failure would goes out quarantined; a device's own trouble does not")
    func quarantinedAfterFailure() async throws {
        let queue = InMemoryDeliveryQueue()
        let seen = NIOLockedValueBox<[String: [Bool]]>([:])
        let provider = ScriptedProvider { push in
            let flags = seen.withLockedValue { seen in
                seen[push.target.token, default: []].append(push.quarantined)
                return seen[push.target.token]!
            }
            guard flags.count <= 2 else { return .sent(messageID: "m") }
            return .retry(after: nil, reason: "503", scope: push.target.token == "service" ? .provider : .device)
        }
        let ids = [queue.add(token: "service"), queue.add(token: "device")]
        try await DispatcherLaneTests.withDispatcher(queue: queue, providers: [provider], configuration: Self.configuration(failures: 100)) {
            _, _ in
            try await DispatcherLaneTests.eventually("both sent") { queue.finished.count == ids.count }
        }
        #expect(seen.withLockedValue { $0 } == ["service": [false, true, true], "device": [false, false, false]])
    }
}
