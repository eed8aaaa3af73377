import Synchronization

/// The operation did not finish within its deadline.
public struct DeadlineExceeded: Error, CustomStringConvertible {
    /// How long it was given.
    public var timeout: Duration
    public var description: String { "operation did not finish within \(timeout)" }
}

/// Runs `operation`, giving up after `timeout` (or when the caller is cancelled) even if the operation
/// ignores cancellation: a database call on a connection that died mid-query must not wedge a lane
/// or a shutdown. The abandoned operation is cancelled and left to finish on its own.
public func withDeadline<T: Sendable>(
    _ timeout: Duration,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let race = DeadlineRace<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            race.start(continuation)
            let work = Task {
                do {
                    race.finish(.success(try await operation()))
                } catch {
                    race.finish(.failure(error))
                }
            }
            let timer = Task {
                try? await Task.sleep(for: timeout)
                if !Task.isCancelled, race.finish(.failure(DeadlineExceeded(timeout: timeout))) {
                    work.cancel()
                }
            }
            race.attach(work: work, timer: timer)
        }
    } onCancel: {
        race.cancel()
    }
}

/// Resumes the continuation exactly once, with whichever of result, timeout or cancellation comes first.
private final class DeadlineRace<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var pending: Result<T, any Error>?
        var work: Task<Void, Never>?
        var timer: Task<Void, Never>?
        var done = false
    }

    private let state = Mutex(State())

    func start(_ continuation: CheckedContinuation<T, any Error>) {
        let early = state.withLock { state -> Result<T, any Error>? in
            if let pending = state.pending { return pending }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    func attach(work: Task<Void, Never>, timer: Task<Void, Never>) {
        let finished = state.withLock { state in
            state.work = work
            state.timer = timer
            return state.done
        }
        if finished { timer.cancel() }
    }

    /// Returns true if this call decided the outcome.
    @discardableResult
    func finish(_ result: Result<T, any Error>) -> Bool {
        let (continuation, timer, won) = state.withLock { state -> (CheckedContinuation<T, any Error>?, Task<Void, Never>?, Bool) in
            guard !state.done else { return (nil, nil, false) }
            state.done = true
            let continuation = state.continuation
            state.continuation = nil
            if continuation == nil { state.pending = result }
            return (continuation, state.timer, true)
        }
        timer?.cancel()
        continuation?.resume(with: result)
        return won
    }

    func cancel() {
        let work = state.withLock { $0.work }
        if finish(.failure(CancellationError())) {
            work?.cancel()
        }
    }
}
