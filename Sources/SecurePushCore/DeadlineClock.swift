import Dispatch
import NIOConcurrencyHelpers

/// The one timer behind every `withDeadline` of a process. Deadlines wait in buckets of `resolution`; a single
/// repeating Dispatch timer, resumed while any deadline waits and suspended when none does, fires the buckets that
/// came due. Scheduling and cancelling a deadline take a lock and a dictionary entry. (Until stop 67 each call made,
/// resumed and cancelled a Dispatch timer source of its own: about 4 % of the machine's CPU in the read row, most of
/// it Dispatch's manager thread.) A deadline fires at or after its time, at most one `resolution` (and the timer's
/// leeway) late; one cancelled before then never fires and leaves nothing behind.
final class DeadlineClock: Sendable {
    /// The process's clock.
    static let shared = DeadlineClock(resolution: .milliseconds(5))

    /// A scheduled deadline, for `cancel`.
    struct Token: Sendable {
        fileprivate let bucket: UInt64
        fileprivate let id: UInt64
    }

    private struct State {
        /// Deadlines by bucket: bucket `b` holds those due in ((b - 1) × resolution, b × resolution] of uptime.
        var buckets: [UInt64: [UInt64: @Sendable () -> Void]] = [:]
        var lastID: UInt64 = 0
        var running = false
    }

    private let resolution: UInt64
    private let state = NIOLockedValueBox(State())
    // A Dispatch source is thread-safe; it is resumed and suspended only under `state`'s lock, so the two never cross.
    private nonisolated(unsafe) let source: any DispatchSourceTimer

    private init(resolution: Duration) {
        let nanoseconds = UInt64(max(1, resolution.wholeNanoseconds))
        self.resolution = nanoseconds
        source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "securepush.deadline"))
        source.schedule(deadline: .now(), repeating: .nanoseconds(Int(nanoseconds)), leeway: .nanoseconds(Int(nanoseconds / 2)))
        source.setEventHandler { [weak self] in self?.tick() }
    }

    /// Calls `fire` once `timeout` has passed, unless `cancel` comes first.
    func schedule(after timeout: Duration, _ fire: @escaping @Sendable () -> Void) -> Token {
        let (due, overflow) = DispatchTime.now().uptimeNanoseconds.addingReportingOverflow(UInt64(max(0, timeout.wholeNanoseconds)))
        let bucket = overflow ? UInt64.max : due / resolution + (due % resolution == 0 ? 0 : 1)
        return state.withLockedValue { state in
            state.lastID &+= 1
            state.buckets[bucket, default: [:]][state.lastID] = fire
            if !state.running {
                state.running = true
                source.resume()
            }
            return Token(bucket: bucket, id: state.lastID)
        }
    }

    /// Forgets a deadline that has not fired (one that fired or was cancelled already is ignored).
    func cancel(_ token: Token) {
        state.withLockedValue { state in
            // An emptied bucket goes, so that no bucket stands empty: `tick` suspends the timer on an empty table.
            state.buckets[token.bucket]?.removeValue(forKey: token.id)
            if state.buckets[token.bucket]?.isEmpty == true { state.buckets[token.bucket] = nil }
        }
    }

    private func tick() {
        let now = DispatchTime.now().uptimeNanoseconds / resolution
        let due = state.withLockedValue { state -> [@Sendable () -> Void] in
            var due: [@Sendable () -> Void] = []
            for bucket in Array(state.buckets.keys) where bucket <= now {
                if let fired = state.buckets.removeValue(forKey: bucket) { due.append(contentsOf: fired.values) }
            }
            if state.buckets.isEmpty, state.running {
                state.running = false
                source.suspend()
            }
            return due
        }
        for fire in due { fire() }
    }
}
