import Foundation
import Logging
import SecurePushCore
import SecurePushDispatcher
import ServiceLifecycle
import Testing

/// Lane logic against the in-memory queue: no database, no network.
@Suite("Dispatcher lanes")
struct DispatcherLaneTests {
    static func configuration(concurrency: Int = 8, batchSize: Int = 16, grace: Duration = .seconds(5)) -> DispatcherConfiguration {
        var configuration = DispatcherConfiguration()
        configuration.concurrency = concurrency
        configuration.batchSize = batchSize
        configuration.lanes = 2
        configuration.pollInterval = .milliseconds(50)
        configuration.shutdownGracePeriod = grace
        configuration.databaseTimeout = .seconds(5)
        configuration.retry = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(1), maxDelay: .milliseconds(5), jitter: 0)
        return configuration
    }

    /// Runs a dispatcher in a service group; `body` gets it and a way to trigger graceful shutdown.
    /// Returns once the dispatcher has stopped.
    static func withDispatcher(
        queue: any DeliveryQueue,
        providers: [any PushProvider],
        configuration: DispatcherConfiguration,
        _ body: @Sendable (Dispatcher, ServiceGroup) async throws -> Void
    ) async throws {
        var logger = Logger(label: "securepush.test.lanes")
        logger.logLevel = .critical
        let dispatcher = Dispatcher(
            queue: queue, providers: providers, configuration: configuration, signal: WakeSignal(), stats: DispatcherStats(),
            workerID: UUID(), logger: logger)
        let group = ServiceGroup(configuration: .init(services: [.init(service: dispatcher)], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            // Bounded: a dispatcher that does not stop fails the test (DeadlineExceeded) instead of hanging it.
            tasks.addTask { try await withDeadline(.seconds(60)) { try await group.run() } }
            try await body(dispatcher, group)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    static func eventually(_ what: String, _ condition: @Sendable () -> Bool) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(20)
        while !condition() {
            guard clock.now < deadline else { throw Failure("timed out waiting for: \(what)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    @Test("every delivery is sent once, with at most `concurrency` in flight")
    func sendsEverything() async throws {
        let queue = InMemoryDeliveryQueue()
        let ids = (0..<100).map { _ in queue.add() }
        let provider = ScriptedProvider { _ in
            await Task.yield()
            return .sent(messageID: "m")
        }
        try await Self.withDispatcher(queue: queue, providers: [provider], configuration: Self.configuration(concurrency: 4)) { _, _ in
            try await Self.eventually("all sent") { queue.finished.count == ids.count }
        }
        #expect(provider.started == ids.count)
        #expect(provider.maxInFlight <= 4 * 2, "at most concurrency per lane, two lanes")
        for id in ids {
            #expect(queue.finished[id] == .sent(messageID: "m"))
            #expect(queue.row(id)?.delivery.push.attempt == 1)
        }
    }

    @Test("a retry runs again and then succeeds; an exhausted one fails with the last reason")
    func retries() async throws {
        let queue = InMemoryDeliveryQueue()
        let flaky = queue.add()
        let broken = queue.add(platform: .fcm)
        let simulated = ScriptedProvider { push in
            push.attempt == 1 ? .retry(after: nil, reason: "503") : .sent(messageID: nil)
        }
        let fcm = ScriptedProvider(platform: .fcm) { _ in .retry(after: nil, reason: "FCM 503 UNAVAILABLE") }
        try await Self.withDispatcher(queue: queue, providers: [simulated, fcm], configuration: Self.configuration()) { _, _ in
            try await Self.eventually("both finished") { queue.finished.count == 2 }
        }
        #expect(queue.finished[flaky] == .sent(messageID: nil))
        #expect(queue.row(flaky)?.delivery.push.attempt == 2)
        #expect(queue.finished[broken] == .failed(error: "retries exhausted after 3 attempts: FCM 503 UNAVAILABLE"))
    }

    @Test("a row that cannot become a push is failed with its reason and never sent")
    func rejectedRows() async throws {
        let queue = InMemoryDeliveryQueue()
        let rejected = queue.addRejected(reason: "unknown platform \"pager\"")
        let provider = ScriptedProvider()
        try await Self.withDispatcher(queue: queue, providers: [provider], configuration: Self.configuration()) { _, _ in
            try await Self.eventually("the rejected row failed") { queue.finished[rejected] != nil }
        }
        #expect(queue.finished[rejected] == .failed(error: "unknown platform \"pager\""))
        #expect(provider.started == 0)
    }

    @Test("inactive devices are cancelled and expired notifications expire, unsent")
    func notSent() async throws {
        let queue = InMemoryDeliveryQueue()
        let inactive = queue.add(deviceActive: false)
        let expired = queue.add(expiresIn: -1)
        let provider = ScriptedProvider()
        try await Self.withDispatcher(queue: queue, providers: [provider], configuration: Self.configuration()) { _, _ in
            try await Self.eventually("both finished") { queue.finished.count == 2 }
        }
        #expect(queue.finished[inactive] == .cancelled(reason: "device deactivated"))
        #expect(queue.finished[expired] == .expired)
        #expect(provider.started == 0)
    }

    @Test("at the shutdown deadline in-flight sends are cancelled, their outcomes written, unstarted claims released")
    func shutdownDeadline() async throws {
        let queue = InMemoryDeliveryQueue()
        let ids = (0..<10).map { _ in queue.add() }
        let provider = ScriptedProvider.stalled()
        var configuration = Self.configuration(concurrency: 3, batchSize: 10, grace: .milliseconds(200))
        configuration.lanes = 1
        let clock = ContinuousClock()
        let start = clock.now
        try await Self.withDispatcher(queue: queue, providers: [provider], configuration: configuration) { _, _ in
            try await Self.eventually("three sends in flight") { provider.inFlight == 3 }
        }
        let elapsed = clock.now - start
        #expect(elapsed < .seconds(10), "stopped at the deadline, not when the stalled sends would end")
        #expect(provider.started == 3, "nothing new starts after shutdown began")
        #expect(queue.claimedCount == 0, "no claim is left behind")
        let retried = ids.filter { queue.row($0)?.outcome?.kind == .retry }
        let released = ids.filter { queue.row($0)?.outcome == nil }
        #expect(retried.count == 3, "the cancelled sends are written as retries")
        #expect(released.count == 7)
        for id in released {
            #expect(queue.row(id)?.pending == true)
            #expect(queue.row(id)?.delivery.push.attempt == 0, "a released claim does not count as an attempt")
        }
    }

    @Test("graceful shutdown lets in-flight sends finish within the grace period")
    func gracefulFinish() async throws {
        let queue = InMemoryDeliveryQueue()
        let id = queue.add()
        let (release, releaseSend) = AsyncStream<Void>.makeStream()
        let provider = ScriptedProvider { _ in
            for await _ in release {}
            return .sent(messageID: "late")
        }
        var configuration = Self.configuration(grace: .seconds(30))
        configuration.lanes = 1
        try await Self.withDispatcher(queue: queue, providers: [provider], configuration: configuration) { dispatcher, group in
            try await Self.eventually("the send started") { provider.inFlight == 1 }
            await group.triggerGracefulShutdown()
            // The send is still running: shutdown waits for it rather than cancelling it.
            #expect(queue.finished[id] == nil)
            releaseSend.finish()
        }
        #expect(queue.finished[id] == .sent(messageID: "late"))
    }
}
