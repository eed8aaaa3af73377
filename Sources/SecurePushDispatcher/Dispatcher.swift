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
            await process(batch)
        }
    }

    /// Sends one claimed batch and writes its outcomes.
    func process(_ batch: ClaimedBatch) async {
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
        let (sent, unstarted) = await send(toSend)
        completions.append(contentsOf: sent)
        await writeOutcomes(completions, unstarted: unstarted, leaseToken: batch.leaseToken)
    }

    private typealias SendResult = (delivery: ClaimedDelivery, result: PushResult, elapsed: Duration, answeredAt: ContinuousClock.Instant)

    /// Sends with at most `concurrency` pushes in flight. A child watches the shutdown deadline: when it
    /// fires, the sends in flight are cancelled (providers answer `.retry`). Returns the completions and
    /// the deliveries never started (after a shutdown began, or of a platform without a provider).
    private func send(_ deliveries: [ClaimedDelivery]) async -> (completions: [DeliveryCompletion], unstarted: [UUID]) {
        var completions: [DeliveryCompletion] = []
        completions.reserveCapacity(deliveries.count)
        var unstarted: [UUID] = []
        guard !deliveries.isEmpty else { return (completions, unstarted) }
        await withTaskGroup(of: SendResult?.self) { group in
            // The watcher: returns nil at the shutdown deadline, or when cancelled once the sends are done.
            group.addTask {
                await self.sendDeadline.wait(since: 0, timeout: nil)
                return nil
            }
            var inFlight = 0
            func collectOne() async {
                guard let next = await group.next() else { return }
                if let next {
                    completions.append(outcome(for: next))
                    inFlight -= 1
                } else {
                    group.cancelAll()
                }
            }
            for (index, delivery) in deliveries.enumerated() {
                while inFlight >= configuration.concurrency {
                    await collectOne()
                }
                // Checked after waiting for a free slot: a shutdown meanwhile leaves the rest unstarted.
                if isStopping {
                    unstarted.append(contentsOf: deliveries[index...].map(\.id))
                    break
                }
                guard let provider = providers[delivery.push.target.platform] else {
                    unstarted.append(delivery.id)
                    continue
                }
                group.addTask {
                    let clock = ContinuousClock()
                    let start = clock.now
                    let result = await provider.send(delivery.push)
                    let answeredAt = clock.now
                    return (delivery, result, answeredAt - start, answeredAt)
                }
                inFlight += 1
            }
            while inFlight > 0 {
                await collectOne()
            }
            group.cancelAll()
        }
        return (completions, unstarted)
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
        return DeliveryCompletion(deliveryID: sent.delivery.id, outcome: outcome, answeredAt: sent.answeredAt)
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
