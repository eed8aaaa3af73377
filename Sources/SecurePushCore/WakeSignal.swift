import NIOConcurrencyHelpers

/// Wakes waiters (idle dispatcher lanes, the primary router's watch). A generation counter makes wake-ups sticky: a lane that read the
/// generation before an empty claim returns at once if a NOTIFY arrived in between.
public final class WakeSignal: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var nextWaiter: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        /// Waiters released (timeout or cancellation) before they registered.
        var released: Set<UInt64> = []
    }

    private let state = NIOLockedValueBox(State())

    /// Creates a signal.
    public init() {}

    /// The number of signals so far.
    public var generation: UInt64 {
        state.withLockedValue { $0.generation }
    }

    /// Wakes every waiting lane.
    public func signal() {
        let waiters = state.withLockedValue { state in
            state.generation &+= 1
            let waiters = state.waiters
            state.waiters.removeAll(keepingCapacity: true)
            return waiters
        }
        for continuation in waiters.values {
            continuation.resume()
        }
    }

    /// Waits until a signal newer than `seen`, the timeout (none when `nil`), or cancellation,
    /// whichever comes first.
    public func wait(since seen: UInt64, timeout: Duration?) async {
        let id = state.withLockedValue { state in
            state.nextWaiter &+= 1
            return state.nextWaiter
        }
        await withTaskGroup(of: Void.self) { group in
            if let timeout {
                group.addTask {
                    try? await Task.sleep(for: timeout)
                    self.release(id)
                }
            }
            group.addTask {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        let resumeNow = self.state.withLockedValue { state in
                            if state.generation != seen || state.released.remove(id) != nil {
                                return true
                            }
                            state.waiters[id] = continuation
                            return false
                        }
                        if resumeNow { continuation.resume() }
                    }
                } onCancel: {
                    self.release(id)
                }
            }
            await group.next()
            group.cancelAll()
        }
        state.withLockedValue { _ = $0.released.remove(id) }
    }

    private func release(_ id: UInt64) {
        let continuation = state.withLockedValue { state in
            if let continuation = state.waiters.removeValue(forKey: id) {
                return Optional(continuation)
            }
            state.released.insert(id)
            return nil
        }
        continuation?.resume()
    }
}
