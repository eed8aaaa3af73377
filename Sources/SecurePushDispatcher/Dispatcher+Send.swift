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
        /// The lane slot the send took.
        var ticket: LaneLoad.Ticket
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
    }

    /// The outcome of a delivery not pushed because its address is paused (`FailingDevices`): a retry once the
    /// pause is over, spending the attempt (or failed, or expired, as the retry policy says).
    func paused(_ delivery: ClaimedDelivery, for pause: Duration) -> DeliveryCompletion {
        let result = PushResult.retry(after: pause, reason: "its push address failed its last pushes; paused", scope: .device)
        return DeliveryCompletion(deliveryID: delivery.id, outcome: decide(result, of: delivery.push))
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

    /// Sends within the lane's bounds (`load`: `concurrency` in flight across the lane's batches, a share of
    /// them per user: a push of a user who holds their share waits in this batch, after `started`). A watcher
    /// child cancels the sends in flight at the shutdown deadline or at the lease deadline, whichever comes
    /// first (providers answer `.retry`). No send starts after the lease deadline or once shutdown began, and
    /// none while its breaker is open. `started` is signalled once every send has started (or will not
    /// start), before the last ones end.
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
                    if case .tokenInvalid = sent.result { deadTokens.insert(sent.delivery.push.target) }
                    if !sent.cancelled { failingDevices.record(sent.delivery.push.target, sent.result, at: clock.now) }
                    inFlight -= 1
                    // Freed once its result is recorded (not when the send ends): the next send sees the breaker's verdict.
                    load.end(sent.ticket)
                case .watcher(let watch):
                    watching = false
                    if case .leaseDeadline = watch { sending.cancelledByLease = inFlight }
                    group.cancelAll()
                }
            }
            /// Waits for a send to end: this batch's own first, else any of the lane's (at most 250 ms).
            func awaitChange() async {
                if inFlight > 0 {
                    await collectOne()
                } else {
                    let seen = load.ended.generation
                    await load.ended.wait(since: seen, timeout: max(min(lease.remaining(at: clock.now), .milliseconds(250)), .milliseconds(1)))
                }
            }
            /// Starts `delivery`'s send, or settles it (unstarted, abandoned, deferred); returns false when its
            /// user (or the lane) has no slot and `wait` is false: it is then left for the caller.
            func start(_ delivery: ClaimedDelivery, wait: Bool) async -> Bool {
                while true {
                    while !load.hasRoom, !isStopping, !lease.hasPassed(at: clock.now) {
                        await awaitChange()
                    }
                    // Paced: wait for this push's slot (a shutdown or lease deadline meanwhile is checked below).
                    if let pacer, !isStopping, !lease.hasPassed(at: clock.now) {
                        _ = await pacer.acquire()
                    }
                    // Checked after waiting: a shutdown meanwhile leaves it unstarted, a lease deadline to rescue.
                    if isStopping {
                        sending.unstarted.append(delivery.id)
                        return true
                    }
                    if lease.hasPassed(at: clock.now) {
                        sending.abandoned.append(delivery.id)
                        return true
                    }
                    guard let provider = providers[delivery.push.target.platform] else {
                        sending.unstarted.append(delivery.id)
                        return true
                    }
                    let key = CircuitKey(for: delivery.push.target, policies: breakers.endpointPolicies)
                    let probe: Bool
                    switch breakers.permit(key, user: delivery.user, at: clock.now) {
                    case .send:
                        probe = false
                    case .probe:
                        probe = true
                    case .reject(let retryAfter):
                        var deferred = sending.deferred[key] ?? Deferred()
                        deferred.ids.append(delivery.id)
                        deferred.delay = max(deferred.delay, retryAfter)
                        sending.deferred[key] = deferred
                        return true
                    }
                    let standing = failingDevices.standing(of: delivery.push.target, at: clock.now)
                    if let pause = standing.pause {
                        // Its address failed its last pushes: not pushed (no connection, no encryption), and the
                        // attempt is spent. A probe's slot is given back without a verdict.
                        if probe { breakers.record(key, .inconclusive, probe: true, user: delivery.user, at: clock.now) }
                        sending.completions.append(paused(delivery, for: pause))
                        return true
                    }
                    guard case .started(let ticket) = load.begin(user: delivery.user) else {
                        // The user holds their share of the lane (or another batch took the last slot): a
                        // probe's slot is given back; the push waits in this batch for a slot of its user.
                        if probe { breakers.record(key, .inconclusive, probe: true, user: delivery.user, at: clock.now) }
                        guard wait else { return false }
                        await awaitChange()
                        continue
                    }
                    var push = delivery.push
                    push.quarantined = standing.failed
                    group.addTask {
                        let start = clock.now
                        let result = await DispatchTracing.push(delivery) { await provider.send(push) }
                        let answeredAt = clock.now
                        return .sent(
                            SendResult(
                                delivery: delivery, result: result, elapsed: answeredAt - start, answeredAt: answeredAt, key: key, probe: probe,
                                cancelled: Task.isCancelled, ticket: ticket))
                    }
                    inFlight += 1
                    return true
                }
            }
            // Every push whose user has a slot starts now; the others wait below, after the lane was told that
            // this batch has started: a user's slow endpoints hold that user's pushes, never the lane.
            var waiting: [ClaimedDelivery] = []
            for delivery in deliveries where await !start(delivery, wait: false) {
                waiting.append(delivery)
            }
            started.signal()
            for delivery in waiting {
                _ = await start(delivery, wait: true)
            }
            while inFlight > 0 {
                await collectOne()
            }
            if watching { group.cancelAll() }
        }
        return sending
    }
}
