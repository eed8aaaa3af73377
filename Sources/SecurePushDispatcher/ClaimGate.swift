import NIOConcurrencyHelpers
import SecurePushCore

/// Lets a dispatcher's lanes claim at the same time only while claims come back full.
///
/// A claim has a fixed cost (its transaction and statements, the round trips, the batch's bookkeeping) beside
/// its cost per delivery. While claims come back full (a backlog), a second lane claiming while the first one's
/// batch is being sent keeps both the database and the push services busy. While they come back short (the
/// dispatcher keeps up), a claim running beside another only splits what is due into two smaller batches and
/// pays the fixed cost twice for the same deliveries; on shared cores that CPU is the producers'. So a lane
/// waits for a running claim to end unless the last claim that ended was full (issue 46: 16 producers beside
/// one dispatcher on two cores committed 4,500 to 4,900 notifications/s with two lanes claiming at once, 6,500 to
/// 6,900/s with one claim at a time; commit-to-push at 1,000/s did not change).
final class ClaimGate: Sendable {
    private struct State {
        var running = 0
        var lastFull = false
    }

    private let state = NIOLockedValueBox(State())
    private let ended = WakeSignal()

    /// Waits until a claim may start: none is running, or the last one that ended was full. Returns false,
    /// without entering, once `proceed` says the lane stops.
    func enter(while proceed: () -> Bool) async -> Bool {
        while proceed() {
            let seen = ended.generation
            if tryEnter() { return true }
            await ended.wait(since: seen, timeout: .milliseconds(100))
        }
        return false
    }

    /// Starts a claim if one may start now (see `enter`).
    func tryEnter() -> Bool {
        state.withLockedValue { state in
            guard state.running == 0 || state.lastFull else { return false }
            state.running += 1
            return true
        }
    }

    /// A claim that `enter` let start ended; `full` when it returned as many deliveries as it asked for.
    func leave(full: Bool) {
        state.withLockedValue { state in
            state.running -= 1
            state.lastFull = full
        }
        ended.signal()
    }
}
