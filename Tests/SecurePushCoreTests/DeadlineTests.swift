import SecurePushCore
import Synchronization
import Testing

@Suite("withDeadline")
struct DeadlineTests {
    struct Boom: Error, Equatable {}

    @Test("an early result is returned")
    func earlyResult() async throws {
        let value = try await withDeadline(.seconds(30)) { 42 }
        #expect(value == 42)
    }

    @Test("an early error is rethrown as is")
    func earlyError() async {
        await #expect(throws: Boom.self) {
            try await withDeadline(.seconds(30)) { () async throws -> Int in throw Boom() }
        }
    }

    @Test("an operation that outlives the deadline throws DeadlineExceeded, and is cancelled")
    func timeout() async throws {
        let cancelled = Mutex(false)
        let clock = ContinuousClock()
        let start = clock.now
        await #expect(throws: DeadlineExceeded.self) {
            try await withDeadline(.milliseconds(100)) {
                do {
                    try await Task.sleep(for: .seconds(3600))
                } catch {
                    cancelled.withLock { $0 = true }
                    throw error
                }
            }
        }
        #expect(clock.now - start >= .milliseconds(100))
        #expect(clock.now - start < .seconds(10))
        // The abandoned operation gets its cancellation; wait for it to observe it.
        let observed = clock.now + .seconds(10)
        while !cancelled.withLock({ $0 }), clock.now < observed { await Task.yield() }
        #expect(cancelled.withLock { $0 })
    }

    @Test("an operation that ignores cancellation cannot hold the caller past the deadline")
    func ignoresCancellation() async throws {
        let (never, neverContinuation) = AsyncStream<Void>.makeStream()
        let clock = ContinuousClock()
        let start = clock.now
        await #expect(throws: DeadlineExceeded.self) {
            try await withDeadline(.milliseconds(100)) {
                // A wait that cancellation does not end (an iterator in a detached-from-cancellation shape).
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    Task.detached {
                        for await _ in never {}
                        continuation.resume()
                    }
                }
            }
        }
        #expect(clock.now - start < .seconds(10))
        neverContinuation.finish()
    }

    @Test("cancelling the caller ends the wait with CancellationError")
    func callerCancelled() async throws {
        let task = Task {
            try await withDeadline(.seconds(3600)) { try await Task.sleep(for: .seconds(3600)) }
        }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test("a caller already cancelled does not wait for the deadline")
    func alreadyCancelled() async throws {
        let clock = ContinuousClock()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await withDeadline(.seconds(3600)) { () async throws -> Int in
                try await Task.sleep(for: .seconds(3600))
                return 1
            }
        }
        let start = clock.now
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.now - start < .seconds(10))
    }
}
