import NIOConcurrencyHelpers
import SecurePushCore
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

    @Test("a value produced after the deadline goes to discard (a late connection is closed, not dropped)")
    func lateValueDiscarded() async throws {
        let discarded = NIOLockedValueBox<[Int]>([])
        let gate = NIOLockedValueBox<CheckedContinuation<Void, Never>?>(nil)
        await #expect(throws: DeadlineExceeded.self) {
            try await withDeadline(.milliseconds(50), discard: { value in discarded.withLockedValue { $0.append(value) } }) {
                // Ignores cancellation, as a connection attempt in flight may: finishes only when let through.
                await withCheckedContinuation { continuation in gate.withLockedValue { $0 = continuation } }
                return 7
            }
        }
        #expect(discarded.withLockedValue { $0 }.isEmpty, "nothing produced yet")
        let clock = ContinuousClock()
        let limit = clock.now + .seconds(10)
        var waiting: CheckedContinuation<Void, Never>?
        while waiting == nil, clock.now < limit {
            waiting = gate.withLockedValue { $0 }
            await Task.yield()
        }
        waiting?.resume()
        while discarded.withLockedValue({ $0 }).isEmpty, clock.now < limit { await Task.yield() }
        #expect(discarded.withLockedValue { $0 } == [7])
    }

    @Test("an operation that outlives the deadline throws DeadlineExceeded, and is cancelled")
    func timeout() async throws {
        let cancelled = NIOLockedValueBox(false)
        let clock = ContinuousClock()
        let start = clock.now
        await #expect(throws: DeadlineExceeded.self) {
            try await withDeadline(.milliseconds(100)) {
                do {
                    try await Task.sleep(for: .seconds(3600))
                } catch {
                    cancelled.withLockedValue { $0 = true }
                    throw error
                }
            }
        }
        #expect(clock.now - start >= .milliseconds(100))
        #expect(clock.now - start < .seconds(10))
        // The abandoned operation gets its cancellation; wait for it to observe it.
        let observed = clock.now + .seconds(10)
        while !cancelled.withLockedValue({ $0 }), clock.now < observed { await Task.yield() }
        #expect(cancelled.withLockedValue { $0 })
    }

    @Test("withDeadlineJoined: an operation past the deadline is cancelled and has ended when the caller gets DeadlineExceeded")
    func joined() async throws {
        let ended = NIOLockedValueBox(false)
        await #expect(throws: DeadlineExceeded.self) {
            try await withDeadlineJoined(.milliseconds(50)) {
                // Sees its cancellation, then takes a while to wind down (as a body read finishing its stream).
                do { try await Task.sleep(for: .seconds(3600)) } catch {}
                try? await Task.sleep(for: .milliseconds(200))
                ended.withLockedValue { $0 = true }
                return 1
            }
        }
        #expect(ended.withLockedValue { $0 }, "the operation ended before the caller went on")
        #expect(try await withDeadlineJoined(.seconds(30)) { 42 } == 42)
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
