import Foundation
import SecurePushCore

extension Dispatcher {
    /// One finished send.
    struct SendResult {
        var delivery: ClaimedDelivery
        var result: PushResult
        var elapsed: Duration
        /// When the provider answered (the delivery log's `accepted_at` is derived from it).
        var answeredAt: ContinuousClock.Instant
        /// The breaker the send went through, and whether it went as a probe.
        var key: CircuitKey
        var probe: Bool
        /// Cancelled by us (shutdown or lease deadline): says nothing about the provider.
        var cancelled: Bool
    }

    /// Deliveries a circuit breaker kept back, released to run after `delay`.
    struct Deferred {
        var ids: [UUID] = []
        var delay: Duration = .zero
    }

    /// What became of a batch's sends.
    struct Sending {
        var completions: [DeliveryCompletion] = []
        /// Not started: a shutdown began, or no provider for the platform. Released without an attempt.
        var unstarted: [UUID] = []
        /// Not started because the lease deadline passed: the lease is lost, so they are left to rescue.
        var abandoned: [UUID] = []
        /// Sends cancelled in flight at the lease deadline (written as retries, fenced by the token).
        var cancelledByLease = 0
        /// Not sent because their breaker is open: released without an attempt, after the open time.
        var deferred: [CircuitKey: Deferred] = [:]
        /// Not sent because their user had `LaneLoad.perUserLimit` sends in flight: released without an
        /// attempt, after `Dispatcher.heldBackDelay`.
        var heldBack: [UUID] = []
    }

    /// Why the watcher child ended.
    private enum Watch {
        case shutdownDeadline
        case leaseDeadline
        case sendsDone
    }

    private enum SendChild {
        case sent(SendResult)
        case watcher(Watch)
    }

    /// Sends within the lane's bounds (`load`: `concurrency` in flight across the lane's batches, a quarter of
    /// them per user). A watcher child cancels the sends in flight at the shutdown deadline or at the lease
    /// deadline, whichever comes first (providers answer `.retry`). No send starts after the lease deadline
    /// or once shutdown began, and none while its breaker is open. `started` is signalled once every send
    /// has started (or will not start), before the last ones end.
    func send(_ deliveries: [ClaimedDelivery], lease: LeaseDeadline, load: LaneLoad, started: WakeSignal) async -> Sending {
        var sending = Sending()
        sending.completions.reserveCapacity(deliveries.count)
        guard !deliveries.isEmpty else { return sending }
        let clock = ContinuousClock()
        await withTaskGroup(of: SendChild.self) { group in
            group.addTask {
                await self.sendDeadline.wait(since: 0, timeout: lease.remaining(at: clock.now))
                if self.sendDeadline.generation > 0 { return .watcher(.shutdownDeadline) }
                return .watcher(Task.isCancelled ? .sendsDone : .leaseDeadline)
            }
            var inFlight = 0
            var watching = true
            func collectOne() async {
                guard let next = await group.next() else { return }
                switch next {
                case .sent(let sent):
                    let verdict: CircuitBreaker.Result = sent.cancelled ? .inconclusive : CircuitBreaker.Result(sent.result)
                    breakers.record(sent.key, verdict, probe: sent.probe, user: sent.delivery.user, at: clock.now)
                    sending.completions.append(outcome(for: sent))
                    if case .sent = sent.result { sealedCounters.record(sent.delivery.push) }
                    inFlight -= 1
                case .watcher(let watch):
                    watching = false
                    if case .leaseDeadline = watch { sending.cancelledByLease = inFlight }
                    group.cancelAll()
                }
            }
            deliveryLoop: for (index, delivery) in deliveries.enumerated() {
                // A free slot in the lane: this batch's own sends end first, else any of the lane's.
                while !load.hasRoom, !isStopping, !lease.hasPassed(at: clock.now) {
                    if inFlight > 0 {
                        await collectOne()
                    } else {
                        await load.waitForRoom(timeout: min(lease.remaining(at: clock.now), .milliseconds(250)))
                    }
                }
                // Paced: wait for this push's slot (a shutdown or lease deadline meanwhile is checked below).
                if let pacer, !isStopping, !lease.hasPassed(at: clock.now) {
                    _ = await pacer.acquire()
                }
                // Checked after waiting for a free slot: a shutdown meanwhile leaves the rest unstarted,
                // a lease deadline meanwhile leaves them to rescue.
                if isStopping {
                    sending.unstarted.append(contentsOf: deliveries[index...].map(\.id))
                    break
                }
                if lease.hasPassed(at: clock.now) {
                    sending.abandoned.append(contentsOf: deliveries[index...].map(\.id))
                    break
                }
                guard let provider = providers[delivery.push.target.platform] else {
                    sending.unstarted.append(delivery.id)
                    continue
                }
                let key = CircuitKey(for: delivery.push.target, policies: breakers.endpointPolicies)
                let probe: Bool
                switch breakers.permit(key, at: clock.now) {
                case .send:
                    probe = false
                case .probe:
                    probe = true
                case .reject(let retryAfter):
                    var deferred = sending.deferred[key] ?? Deferred()
                    deferred.ids.append(delivery.id)
                    deferred.delay = max(deferred.delay, retryAfter)
                    sending.deferred[key] = deferred
                    continue
                }
                switch load.begin(user: delivery.user) {
                case .started:
                    break
                case .userFull, .laneFull:
                    // Over the user's bound (or another batch of the lane took the last slot meanwhile):
                    // held back without an attempt; a probe's slot is given back.
                    if probe { breakers.record(key, .inconclusive, probe: true, user: delivery.user, at: clock.now) }
                    sending.heldBack.append(delivery.id)
                    continue deliveryLoop
                }
                group.addTask {
                    let start = clock.now
                    let result = await provider.send(delivery.push)
                    let answeredAt = clock.now
                    load.end(user: delivery.user)
                    return .sent(
                        SendResult(
                            delivery: delivery, result: result, elapsed: answeredAt - start, answeredAt: answeredAt, key: key, probe: probe,
                            cancelled: Task.isCancelled))
                }
                inFlight += 1
            }
            started.signal()
            while inFlight > 0 {
                await collectOne()
            }
            if watching { group.cancelAll() }
        }
        return sending
    }
}
