import Foundation
import Logging
import Metrics
import SecurePushCore
import ServiceLifecycle
import Synchronization
import Tracing

/// Claims deliveries, pushes ids through the providers with bounded concurrency and writes outcomes.
///
/// `run()` is one task group: `lanes` independent claim/send/complete loops plus a shutdown-timeout child.
/// On graceful shutdown the lanes stop claiming and finish their batches; once `shutdownGracePeriod` has
/// passed, the timeout child cancels the sends still in flight (they are retried later), and the lanes
/// still write every outcome and release the claims they had not started.
///
/// A batch never sends from a lease it may have lost: no send starts after the batch's local lease
/// deadline (`LeaseDeadline`, on the monotonic clock), sends still in flight then are cancelled, and the
/// deliveries not started are abandoned to maintenance's lease rescue (not released: the lease is gone).
///
/// Each push service has a circuit breaker (`CircuitBreakers`: per platform, per endpoint host for Web Push
/// and WNS). While a platform's breaker is open its deliveries are not claimed; a claimed delivery whose
/// breaker is open is released unsent, without counting an attempt, to run when the breaker lets probes through.
public final class Dispatcher: Service, Sendable {
    let queue: any DeliveryQueue
    let providers: [Platform: any PushProvider]
    let configuration: DispatcherConfiguration
    let signal: WakeSignal
    let stats: DispatcherStats
    let workerID: UUID
    let logger: Logger
    /// The circuit breakers of this process's push services.
    public let breakers: CircuitBreakers
    /// This process's share of `SECUREPUSH_MAX_PUSH_RATE`, when set (the heartbeat keeps the share current).
    public let pacer: PushPacer?
    private let stopping = Atomic<Bool>(false)
    /// Lets the lanes claim at once only while claims come back full.
    let claimGate = ClaimGate()
    /// The recipients pushed to since the last badge fold (`MaintenanceService` folds their rows).
    public let badgeRecipients = BadgeRecipients()
    /// Signalled once, when the shutdown grace period is over: sends still in flight are cancelled.
    let sendDeadline = WakeSignal()
    /// Created once: looking metrics up per push is measurable at thousands of pushes a second.
    let pushTimers: [Platform: Metrics.Timer]
    /// How long claims waited at the replication gate (`securepush_replication_gate_wait`).
    let gateTimer = Metrics.Timer(label: "securepush_replication_gate_wait")
    let outcomeCounters: [DeliveryOutcome.Kind: Counter]
    let sealedCounters = SealedPushCounters()
    /// Addresses this process was just told are dead: not pushed again before their retirement is written.
    let deadTokens = DeadTokens()
    /// Addresses whose pushes keep failing: paused before the shared breakers see them.
    let failingDevices = FailingDevices()

    /// Creates a dispatcher for the given providers; deliveries of other platforms wait.
    public init(
        queue: any DeliveryQueue,
        providers: [any PushProvider],
        configuration: DispatcherConfiguration,
        signal: WakeSignal,
        stats: DispatcherStats,
        workerID: UUID,
        logger: Logger
    ) {
        self.queue = queue
        self.providers = Dictionary(providers.map { ($0.platform, $0) }, uniquingKeysWith: { first, _ in first })
        self.configuration = configuration
        self.signal = signal
        self.stats = stats
        self.workerID = workerID
        self.logger = logger
        self.breakers = CircuitBreakers(policy: configuration.circuitBreaker, endpointPolicies: configuration.endpointPolicies, logger: logger)
        self.pacer = configuration.maxPushRate.map { PushPacer(fleetRate: $0) }
        self.pushTimers = Dictionary(
            uniqueKeysWithValues: Platform.allCases.map {
                ($0, Metrics.Timer(label: "securepush_push_duration", dimensions: [("platform", $0.rawValue)]))
            })
        self.outcomeCounters = Dictionary(
            uniqueKeysWithValues: DeliveryOutcome.Kind.allCases.map {
                ($0, Counter(label: "securepush_deliveries_total", dimensions: [("outcome", $0.rawValue)]))
            })
    }

    /// The platforms this process pushes to.
    public var platforms: [Platform] {
        Platform.allCases.filter { providers[$0] != nil }
    }

    private enum Child {
        case lane
        case shutdownTimeout
    }

    public func run() async throws {
        let (shutdown, shutdownStarted) = AsyncStream<Void>.makeStream()
        let laneCount = max(1, configuration.lanes)
        let grace = configuration.shutdownGracePeriod
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Child.self) { group in
                for lane in 0..<laneCount {
                    group.addTask {
                        await self.runLane(lane)
                        return .lane
                    }
                }
                group.addTask {
                    // Ends when shutdown starts (the stream finishes) or when the lanes are done (cancelled).
                    for await _ in shutdown {}
                    guard !Task.isCancelled else { return .shutdownTimeout }
                    try? await Task.sleep(for: grace)
                    guard !Task.isCancelled else { return .shutdownTimeout }
                    self.logger.notice("shutdown grace period over; cancelling sends still in flight", metadata: ["dispatcher.grace": "\(grace)"])
                    self.sendDeadline.signal()
                    return .shutdownTimeout
                }
                var lanesRunning = laneCount
                for await child in group {
                    guard case .lane = child else { continue }
                    lanesRunning -= 1
                    if lanesRunning == 0 { group.cancelAll() }
                }
            }
        } onGracefulShutdown: {
            self.stop()
            shutdownStarted.finish()
        }
        logger.info("dispatcher stopped", metadata: ["dispatcher.sent": "\(stats.sent)", "dispatcher.failed": "\(stats.failed)"])
    }

    /// Stops claiming new work (as on SIGTERM); lanes finish the batch they hold.
    public func stop() {
        stopping.store(true, ordering: .relaxed)
        signal.signal()
    }

    /// Whether `stop()` was called (or graceful shutdown began).
    public var stopRequested: Bool { stopping.load(ordering: .relaxed) }

    var isStopping: Bool { stopRequested || Task.isCancelled }

    /// One lane: claims a batch, starts its sends, and claims the next as soon as they are all started and
    /// the lane has a send to spare (`LaneLoad`); each batch finishes in its own child task, which writes its
    /// outcomes when its last send ends. A slow endpoint holds its own send, never the lane.
    private func runLane(_ lane: Int) async {
        let load = LaneLoad(
            limit: configuration.concurrency, perUserLimit: Self.perUserLimit(concurrency: configuration.concurrency),
            slowAfter: configuration.slowSendAfter)
        await withDiscardingTaskGroup { batches in
            await claimLoop(lane, load: load, batches: &batches)
        }
    }

    /// One user's sends in flight per lane at most: a quarter of the lane's, and never fewer than 8 (or the
    /// whole lane when it is smaller), so a user with a backlog still sends at full speed on a small lane.
    public static func perUserLimit(concurrency: Int) -> Int {
        max(concurrency / 4, min(concurrency, 8), 1)
    }

    private func claimLoop(_ lane: Int, load: LaneLoad, batches: inout DiscardingTaskGroup) async {
        var claimFailures = 0
        // Empty claims in a row, and whether this lane said it waits for a wake-up since it last found work.
        var emptyClaims = 0
        var awaitingWakeup = false
        let served = self.platforms
        while !isStopping {
            let seen = signal.generation
            // A platform whose breaker lets nothing through is not claimed; the lane wakes when it lets a probe through.
            let blocked = breakers.blockedPlatforms(at: .now)
            let platforms = served.filter { !blocked.contains($0) }
            let idle = min(configuration.pollInterval, breakers.untilNextProbe(at: .now) ?? configuration.pollInterval)
            if !load.hasRoom {
                // Every send slot is taken (by earlier batches' sends): claim once one ends.
                await load.waitForRoom(timeout: configuration.pollInterval)
                continue
            }
            if platforms.isEmpty {
                await signal.wait(since: seen, timeout: max(idle, .milliseconds(1)))
                continue
            }
            // One claim at a time unless claims come back full (ClaimGate).
            guard await claimGate.enter(while: { !self.isStopping }) else { continue }
            let batch: ClaimedBatch
            // Taken before the statement is sent: the database's lease starts later, so this deadline is earlier.
            let claimStart = ContinuousClock.now
            let claimInstant = DefaultTracerClock.now
            // Paced, a batch is no larger than the share sends in a quarter of the lease.
            let limit = pacer?.batchLimit(configuration.batchSize, lease: configuration.leaseDuration) ?? configuration.batchSize
            do {
                let (queue, lease, worker) = (self.queue, configuration.leaseDuration, workerID)
                batch = try await withDeadline(configuration.databaseTimeout) {
                    try await queue.claim(limit: limit, platforms: platforms, lease: lease, worker: worker)
                }
                claimGate.leave(full: batch.deliveries.count + batch.rejected.count >= limit)
                claimFailures = 0
            } catch {
                claimGate.leave(full: false)
                claimFailures += 1
                logger.databaseError("claim failed; backing off", error, metadata: ["dispatcher.lane": "\(lane)"])
                try? await Task.sleep(for: Self.backoff(claimFailures))
                continue
            }
            if batch.isEmpty {
                // Just drained: poll for a moment (producers do not notify a dispatcher that has work). Then
                // say that this one waits for a wake-up and claim once more before waiting for it.
                if let poll = Self.idlePoll(afterEmptyClaims: emptyClaims) {
                    emptyClaims += 1
                    await signal.wait(since: seen, timeout: max(min(poll, idle), .milliseconds(1)))
                } else if !awaitingWakeup {
                    awaitingWakeup = true
                    await announceAwaitingWakeup(lane: lane)
                } else {
                    await signal.wait(since: seen, timeout: max(idle, .milliseconds(1)))
                }
                continue
            }
            emptyClaims = 0
            awaitingWakeup = false
            if configuration.unreadBadge { badgeRecipients.record(batch) }
            DispatchTracing.recordClaim(batch, lane: lane, start: claimInstant)
            let lease = LeaseDeadline(claimStart: claimStart, lease: configuration.leaseDuration)
            if configuration.replicationGate, await !replicated(batch, lease: lease, lane: lane) { continue }
            // The batch runs on its own; the lane goes on once it has started every send.
            let started = WakeSignal()
            batches.addTask {
                await self.process(batch, lease: lease, load: load, started: started)
                started.signal()
            }
            await started.wait(since: 0, timeout: nil)
        }
    }

    /// How long a lane that found nothing polls before its next claim, after `afterEmptyClaims` empty
    /// claims in a row: 1, 2, 4 ... 128 ms, then `nil` (it waits for a wake-up). About a quarter of a second
    /// of polling in all, so a fleet that keeps finding work is never notified (migration 013).
    static func idlePoll(afterEmptyClaims count: Int) -> Duration? {
        count < 8 ? .milliseconds(1 << count) : nil
    }

    /// Tells the queue this dispatcher waits for a wake-up. If that fails the lane still waits: its
    /// fallback poll finds what a producer did not announce.
    private func announceAwaitingWakeup(lane: Int) async {
        let (queue, worker) = (self.queue, workerID)
        do {
            try await withDeadline(configuration.databaseTimeout) { try await queue.awaitWakeup(worker: worker) }
        } catch {
            logger.databaseError("could not ask for wake-ups; polling instead", error, metadata: ["dispatcher.lane": "\(lane)"])
        }
    }

    /// The replication gate: true once the synchronous standbys have flushed past the claim; otherwise the
    /// batch is released unsent (no attempt counted, runnable again in a second) and false is returned.
    func replicated(_ batch: ClaimedBatch, lease: LeaseDeadline, lane: Int) async -> Bool {
        let queue = self.queue
        let wait = min(.seconds(5), lease.remaining(at: .now) / 2)
        let started = ContinuousClock.now
        let safe: Bool
        do {
            safe = try await withDeadline(wait + .seconds(2)) { try await queue.awaitReplication(timeout: wait) }
        } catch {
            logger.databaseError("replication gate: the wait failed; releasing the batch", error, metadata: ["dispatcher.lane": "\(lane)"])
            safe = false
        }
        gateTimer.recordNanoseconds(Int64((ContinuousClock.now - started).wholeMilliseconds) * 1_000_000)
        guard !safe else { return true }
        logger.warning(
            "replication gate: no synchronous standby confirmed the claim in time; the batch is released unsent",
            metadata: ["dispatcher.batch": "\(batch.deliveries.count)", "dispatcher.lane": "\(lane)"])
        let ids = batch.deliveries.map(\.id) + batch.rejected.map(\.id)
        _ = try? await withDeadline(configuration.databaseTimeout) { try await queue.release(ids, leaseToken: batch.leaseToken, delay: .seconds(1)) }
        return false
    }

    /// Sends one claimed batch and writes its outcomes; no send starts after `lease`. `started` is signalled
    /// once every send has started (or will not start).
    func process(_ batch: ClaimedBatch, lease: LeaseDeadline, load: LaneLoad, started: WakeSignal) async {
        var completions: [DeliveryCompletion] = []
        completions.reserveCapacity(batch.deliveries.count + batch.rejected.count)
        for rejected in batch.rejected {
            logger.error(
                "claimed delivery cannot be pushed; failing it", metadata: ["delivery.id": "\(rejected.id)", "push.reason": "\(rejected.reason)"])
            completions.append(DeliveryCompletion(deliveryID: rejected.id, outcome: .failed(error: rejected.reason)))
        }
        var toSend: [ClaimedDelivery] = []
        let now = Date()
        for var delivery in batch.deliveries {
            if deadTokens.contains(delivery.push.target) { delivery.deviceActive = false }
            if let outcome = DeliveryDecision.beforeSending(delivery, maxAttempts: configuration.retry.maxAttempts, now: now) {
                completions.append(DeliveryCompletion(deliveryID: delivery.id, outcome: outcome))
            } else {
                toSend.append(delivery)
            }
        }
        let sending = await send(toSend, lease: lease, load: load, started: started)
        completions.append(contentsOf: sending.completions)
        if !sending.abandoned.isEmpty || sending.cancelledByLease > 0 {
            logger.notice(
                "lease deadline passed before the batch was sent; unstarted deliveries are left to lease rescue",
                metadata: [
                    "dispatcher.abandoned": "\(sending.abandoned.count)",
                    "dispatcher.cancelled_in_flight": "\(sending.cancelledByLease)",
                    "dispatcher.batch": "\(batch.deliveries.count)",
                ])
        }
        if !sending.deferred.isEmpty {
            logger.notice(
                "circuit breaker open: deliveries released unsent, without counting an attempt",
                metadata: [
                    "dispatcher.deferred": "\(sending.deferred.values.reduce(0) { $0 + $1.ids.count })",
                    "circuit.keys": "\(sending.deferred.keys.sorted().map(\.description).joined(separator: ","))",
                ])
        }
        await writeOutcomes(
            completions, unstarted: sending.unstarted, deferred: Array(sending.deferred.values), leaseToken: batch.leaseToken, lease: lease)
    }

    static func backoff(_ failures: Int) -> Duration {
        .milliseconds(min(30_000, 100 * (1 << min(failures, 9))))
    }
}
