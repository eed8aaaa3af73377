import Foundation
import Logging
import Metrics
import SecurePushCore
import SecurePushStore
import ServiceLifecycle
import Synchronization

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
public final class Dispatcher: Service, Sendable {
    let queue: any DeliveryQueue
    let providers: [Platform: any PushProvider]
    let configuration: DispatcherConfiguration
    let signal: WakeSignal
    let stats: DispatcherStats
    let workerID: UUID
    let logger: Logger
    private let stopping = Atomic<Bool>(false)
    /// Signalled once, when the shutdown grace period is over: sends still in flight are cancelled.
    let sendDeadline = WakeSignal()
    /// Created once: looking metrics up per push is measurable at thousands of pushes a second.
    private let pushTimers: [Platform: Metrics.Timer]
    private let outcomeCounters: [DeliveryOutcome.Kind: Counter]

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

    private func runLane(_ lane: Int) async {
        var claimFailures = 0
        let platforms = self.platforms
        while !isStopping {
            let seen = signal.generation
            let batch: ClaimedBatch
            // Taken before the statement is sent: the database's lease starts later, so this deadline is earlier.
            let claimStart = ContinuousClock.now
            do {
                let (queue, limit, lease, worker) = (self.queue, configuration.batchSize, configuration.leaseDuration, workerID)
                batch = try await withDeadline(configuration.databaseTimeout) {
                    try await queue.claim(limit: limit, platforms: platforms, lease: lease, worker: worker)
                }
                claimFailures = 0
            } catch {
                claimFailures += 1
                logger.databaseError("claim failed; backing off", error, metadata: ["dispatcher.lane": "\(lane)"])
                try? await Task.sleep(for: Self.backoff(claimFailures))
                continue
            }
            if batch.isEmpty {
                await signal.wait(since: seen, timeout: configuration.pollInterval)
                continue
            }
            await process(batch, lease: LeaseDeadline(claimStart: claimStart, lease: configuration.leaseDuration))
        }
    }

    /// Sends one claimed batch and writes its outcomes; no send starts after `lease`.
    func process(_ batch: ClaimedBatch, lease: LeaseDeadline) async {
        var completions: [DeliveryCompletion] = []
        completions.reserveCapacity(batch.deliveries.count + batch.rejected.count)
        for rejected in batch.rejected {
            logger.error(
                "claimed delivery cannot be pushed; failing it", metadata: ["delivery.id": "\(rejected.id)", "push.reason": "\(rejected.reason)"])
            completions.append(DeliveryCompletion(deliveryID: rejected.id, outcome: .failed(error: rejected.reason)))
        }
        var toSend: [ClaimedDelivery] = []
        let now = Date()
        for delivery in batch.deliveries {
            if let outcome = DeliveryDecision.beforeSending(delivery, maxAttempts: configuration.retry.maxAttempts, now: now) {
                completions.append(DeliveryCompletion(deliveryID: delivery.id, outcome: outcome))
            } else {
                toSend.append(delivery)
            }
        }
        let sending = await send(toSend, lease: lease)
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
        await writeOutcomes(completions, unstarted: sending.unstarted, leaseToken: batch.leaseToken)
    }

    private typealias SendResult = (delivery: ClaimedDelivery, result: PushResult, elapsed: Duration)

    /// What became of a batch's sends.
    private struct Sending {
        var completions: [DeliveryCompletion] = []
        /// Not started: a shutdown began, or no provider for the platform. Released without an attempt.
        var unstarted: [UUID] = []
        /// Not started because the lease deadline passed: the lease is lost, so they are left to rescue.
        var abandoned: [UUID] = []
        /// Sends cancelled in flight at the lease deadline (written as retries, fenced by the token).
        var cancelledByLease = 0
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

    /// Sends with at most `concurrency` pushes in flight. A watcher child cancels the sends in flight at
    /// the shutdown deadline or at the lease deadline, whichever comes first (providers answer `.retry`).
    /// No send starts after the lease deadline or once shutdown began.
    private func send(_ deliveries: [ClaimedDelivery], lease: LeaseDeadline) async -> Sending {
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
                    sending.completions.append(outcome(for: sent))
                    inFlight -= 1
                case .watcher(let watch):
                    watching = false
                    if case .leaseDeadline = watch { sending.cancelledByLease = inFlight }
                    group.cancelAll()
                }
            }
            for (index, delivery) in deliveries.enumerated() {
                while inFlight >= configuration.concurrency {
                    await collectOne()
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
                group.addTask {
                    let start = clock.now
                    let result = await provider.send(delivery.push)
                    return .sent((delivery, result, clock.now - start))
                }
                inFlight += 1
            }
            while inFlight > 0 {
                await collectOne()
            }
            if watching { group.cancelAll() }
        }
        return sending
    }

    private func outcome(for sent: SendResult) -> DeliveryCompletion {
        let push = sent.delivery.push
        let (seconds, attoseconds) = sent.elapsed.components
        pushTimers[push.target.platform]?.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        let outcome = DeliveryDecision.outcome(
            for: sent.result, of: push, policy: configuration.retry, now: Date(), random: Double.random(in: 0...1))
        if outcome.kind != .sent {
            logger.notice(
                "push not delivered",
                metadata: [
                    "push.notification_id": "\(push.notificationID)",
                    "push.device_id": "\(push.target.deviceID)",
                    "push.platform": "\(push.target.platform.rawValue)",
                    "push.attempt": "\(push.attempt)",
                    "push.outcome": "\(outcome.kind.rawValue)",
                    "push.reason": "\(outcome.detail)",
                ]
            )
        }
        return DeliveryCompletion(deliveryID: sent.delivery.id, outcome: outcome)
    }

    /// Writes outcomes and releases unstarted claims, retrying while the database is unavailable.
    /// The lane is not cancelled by the shutdown deadline (only its sends are), so this bookkeeping runs.
    private func writeOutcomes(_ completions: [DeliveryCompletion], unstarted: [UUID], leaseToken: UUID) async {
        let queue = self.queue
        let timeout = configuration.databaseTimeout
        var applied = 0
        var written = false
        for attempt in 1...5 where !written {
            do {
                if applied == 0 {
                    applied = try await withDeadline(timeout) { try await queue.complete(completions, leaseToken: leaseToken) }
                }
                _ = try await withDeadline(timeout) { try await queue.release(unstarted, leaseToken: leaseToken) }
                written = true
            } catch {
                logger.databaseError("writing outcomes failed; retrying", error, metadata: ["attempt": "\(attempt)"])
                try? await Task.sleep(for: Self.backoff(attempt))
            }
        }
        if applied < completions.count {
            logger.warning(
                "some outcomes were not written: lease lost (rescued by another process) or database unavailable",
                metadata: ["dispatcher.lost": "\(completions.count - applied)"]
            )
        }
        var sent = 0
        var failed = 0
        for completion in completions {
            let kind = completion.outcome.kind
            switch kind {
            case .sent: sent += 1
            case .failed, .tokenInvalid: failed += 1
            default: break
            }
            outcomeCounters[kind]?.increment()
        }
        stats.recordSent(sent)
        stats.recordFailed(failed)
    }

    static func backoff(_ failures: Int) -> Duration {
        .milliseconds(min(30_000, 100 * (1 << min(failures, 9))))
    }
}
