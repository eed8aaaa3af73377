import NIOConcurrencyHelpers

/// The operation did not finish within its deadline.
public struct DeadlineExceeded: Error, CustomStringConvertible {
    /// How long it was given.
    public var timeout: Duration
    public var description: String { "operation did not finish within \(timeout)" }
}

/// Runs `operation`, giving up after `timeout` (or when the caller is cancelled) even if the operation
/// ignores cancellation: a database call on a connection that died mid-query must not wedge a lane
/// or a shutdown. The abandoned operation is cancelled and left to finish on its own; a value it still
/// produces goes to `discard` (a connection made too late must be closed, not dropped).
///
/// The deadline is an entry on the process's `DeadlineClock`, forgotten as soon as the operation finishes. A
/// sleeping task would not do: a cancelled `Task.sleep` keeps its memory until its original deadline, so
/// at thousands of calls a second with a 10 s timeout the process grew by tens of megabytes.
public func withDeadline<T: Sendable>(
    _ timeout: Duration,
    discard: @escaping @Sendable (T) async -> Void = { _ in },
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let race = DeadlineRace<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            race.start(continuation)
            let work = Task {
                do {
                    let value = try await operation()
                    if !race.finish(.success(value)) { await discard(value) }
                } catch {
                    race.finish(.failure(error))
                }
            }
            let timer = DeadlineTimer(after: timeout) {
                if race.finish(.failure(DeadlineExceeded(timeout: timeout))) {
                    work.cancel()
                }
            }
            race.attach(work: work, timer: timer)
        }
    } onCancel: {
        race.cancel()
    }
}

/// A one-shot deadline on the process's `DeadlineClock`; `cancel()` forgets it at once.
private final class DeadlineTimer: Sendable {
    private let token: DeadlineClock.Token

    init(after timeout: Duration, _ fire: @escaping @Sendable () -> Void) {
        token = DeadlineClock.shared.schedule(after: timeout, fire)
    }

    func cancel() {
        DeadlineClock.shared.cancel(token)
    }
}

/// Resumes the continuation exactly once, with whichever of result, timeout or cancellation comes first.
private final class DeadlineRace<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var pending: Result<T, any Error>?
        var work: Task<Void, Never>?
        var timer: DeadlineTimer?
        var done = false
    }

    private let state = NIOLockedValueBox(State())

    func start(_ continuation: CheckedContinuation<T, any Error>) {
        let early = state.withLockedValue { state -> Result<T, any Error>? in
            if let pending = state.pending { return pending }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    /// Keeps the task and the timer until the outcome is decided, then lets both go.
    func attach(work: Task<Void, Never>, timer: DeadlineTimer) {
        let finished = state.withLockedValue { state in
            if !state.done {
                state.work = work
                state.timer = timer
            }
            return state.done
        }
        if finished { timer.cancel() }
    }

    /// Returns true if this call decided the outcome.
    @discardableResult
    func finish(_ result: Result<T, any Error>) -> Bool {
        let (continuation, timer, won) = state.withLockedValue { state -> (CheckedContinuation<T, any Error>?, DeadlineTimer?, Bool) in
            guard !state.done else { return (nil, nil, false) }
            state.done = true
            let continuation = state.continuation
            state.continuation = nil
            if continuation == nil { state.pending = result }
            let timer = state.timer
            (state.timer, state.work) = (nil, nil)
            return (continuation, timer, true)
        }
        timer?.cancel()
        continuation?.resume(with: result)
        return won
    }

    func cancel() {
        let work = state.withLockedValue { $0.work }
        if finish(.failure(CancellationError())) {
            work?.cancel()
        }
    }
}

/// Like `withDeadline`, but an operation that times out (or whose caller is cancelled) is cancelled and waited for
/// before this throws: for an operation that must not outlive its caller. Reading a request's body is one: the
/// server reads the same connection again as soon as the handler has answered (Hummingbird flushes the rest of the
/// body), and two readers of one connection at once must never happen. The operation must end when cancelled.
/// One task runs the operation; the deadline's timer cancels it, and awaiting its value is the join.
public func withDeadlineJoined<T: Sendable>(_ timeout: Duration, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    let work = Task { try await operation() }
    let expired = NIOLockedValueBox(false)
    let timer = DeadlineTimer(after: timeout) {
        expired.withLockedValue { $0 = true }
        work.cancel()
    }
    let result = await withTaskCancellationHandler {
        await work.result
    } onCancel: {
        work.cancel()
    }
    timer.cancel()
    // Past the deadline the caller gets DeadlineExceeded, whatever the cancelled operation ended with.
    if expired.withLockedValue({ $0 }) { throw DeadlineExceeded(timeout: timeout) }
    return try result.get()
}
