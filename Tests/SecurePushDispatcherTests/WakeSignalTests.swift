import SecurePushCore
import SecurePushDispatcher
import Testing

@Suite("WakeSignal")
struct WakeSignalTests {
    @Test("a signal sent before the wait wakes it at once (sticky by generation)")
    func wakeBeforeWait() async throws {
        let signal = WakeSignal()
        let seen = signal.generation
        signal.signal()
        let clock = ContinuousClock()
        let start = clock.now
        // An hour-long timeout: returning at all within the test (well before it) shows the signal woke it,
        // without a tight time bound that a loaded machine could miss.
        await signal.wait(since: seen, timeout: .seconds(3600))
        #expect(clock.now - start < .seconds(600))
        #expect(signal.generation == seen + 1)
    }

    @Test("a signal wakes a lane that is already waiting")
    func wakeWhileWaiting() async throws {
        let signal = WakeSignal()
        let seen = signal.generation
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await signal.wait(since: seen, timeout: nil) }
            // Keep signalling until the waiter returns: a signal sent before it registered wakes it too.
            group.addTask {
                while !Task.isCancelled {
                    signal.signal()
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
            _ = try await group.next()
            group.cancelAll()
        }
        #expect(signal.generation > seen)
    }

    @Test("without a signal the wait ends at its timeout")
    func timeout() async {
        let signal = WakeSignal()
        let clock = ContinuousClock()
        let start = clock.now
        await signal.wait(since: signal.generation, timeout: .milliseconds(100))
        let elapsed = clock.now - start
        #expect(elapsed >= .milliseconds(100))
        #expect(elapsed < .seconds(10))
        #expect(signal.generation == 0)
    }

    @Test("cancelling a waiter without a timeout ends its wait")
    func cancellation() async throws {
        let signal = WakeSignal()
        let waiter = Task { await signal.wait(since: signal.generation, timeout: nil) }
        waiter.cancel()
        try await withDeadline(.seconds(20)) { await waiter.value }
        #expect(signal.generation == 0, "ended by cancellation, not by a signal")
    }

    @Test("every waiting lane is woken by one signal")
    func wakesAll() async throws {
        let signal = WakeSignal()
        let seen = signal.generation
        try await withDeadline(.seconds(20)) {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<5 {
                    group.addTask { await signal.wait(since: seen, timeout: nil) }
                }
                signal.signal()
                await group.waitForAll()
            }
        }
        #expect(signal.generation == seen + 1)
    }
}
