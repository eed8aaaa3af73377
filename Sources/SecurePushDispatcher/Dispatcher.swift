import Foundation
import Logging
import Metrics
import SecurePushCore
import ServiceLifecycle
import Synchronization

/// Claims deliveries, pushes ids through the providers with bounded concurrency and writes outcomes.
///
/// Runs `lanes` independent loops. On graceful shutdown it stops claiming, lets in-flight sends finish
/// for up to `shutdownGracePeriod` (then cancels them) and releases the claims it had not started.
public final class Dispatcher: Service, Sendable {
    let queue: any DeliveryQueue
    let providers: [Platform: any PushProvider]
    let configuration: DispatcherConfiguration
    let signal: WakeSignal
    let stats: DispatcherStats
    let workerID: UUID
    let logger: Logger
    private let stopping = Atomic<Bool>(false)
    /// Created once: looking metrics up per push is measurable at thousands of pushes a second.
    private let pushTimers: [Platform: Metrics.Timer]
    private let outcomeCounters: [String: Counter]

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
            uniqueKeysWithValues: ["sent", "retry", "failed", "token_invalid", "expired", "cancelled"].map {
                ($0, Counter(label: "securepush_deliveries_total", dimensions: [("outcome", $0)]))
            })
    }

    /// The platforms this process pushes to.
    public var platforms: [Platform] {
        Platform.allCases.filter { providers[$0] != nil }
    }

    public func run() async throws {
        let lanes = Task {
            await withDiscardingTaskGroup { group in
                for lane in 0..<max(1, self.configuration.lanes) {
                    group.addTask { await self.runLane(lane) }
                }
            }
        }
        let deadline = Mutex<Task<Void, Never>?>(nil)
        await withGracefulShutdownHandler {
            await withTaskCancellationHandler {
                await lanes.value
            } onCancel: {
                lanes.cancel()
            }
        } onGracefulShutdown: {
            self.stop()
            let grace = self.configuration.shutdownGracePeriod
            deadline.withLock {
                $0 = Task {
                    try? await Task.sleep(for: grace)
                    if !Task.isCancelled { lanes.cancel() }
                }
            }
        }
        deadline.withLock { $0?.cancel() }
        for provider in providers.values {
            await provider.shutdown()
        }
        logger.info("dispatcher stopped", metadata: ["dispatcher.sent": "\(stats.sent)", "dispatcher.failed": "\(stats.failed)"])
    }

    /// Stops claiming new work (as on SIGTERM).
    public func stop() {
        stopping.store(true, ordering: .relaxed)
        signal.signal()
    }

    private var isStopping: Bool { stopping.load(ordering: .relaxed) || Task.isCancelled }

    private func runLane(_ lane: Int) async {
        var claimFailures = 0
        let platforms = self.platforms
        guard !platforms.isEmpty else {
            logger.warning("no push provider configured; nothing to dispatch")
            return
        }
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
                logger.warning("claim failed; backing off", metadata: ["error": "\(Self.describe(error))", "dispatcher.lane": "\(lane)"])
                try? await Task.sleep(for: Self.backoff(claimFailures))
                continue
            }
            if batch.deliveries.isEmpty {
                await signal.wait(since: seen, timeout: configuration.pollInterval)
                continue
            }
            await process(batch)
        }
    }

    /// Sends one claimed batch and writes its outcomes.
    func process(_ batch: ClaimedBatch) async {
        var completions: [DeliveryCompletion] = []
        completions.reserveCapacity(batch.deliveries.count)
        var toSend: [ClaimedDelivery] = []
        let now = Date()
        for delivery in batch.deliveries {
            if !delivery.deviceActive {
                completions.append(.init(deliveryID: delivery.id, outcome: .cancelled(reason: "device deactivated")))
            } else if delivery.push.expiresAt <= now {
                completions.append(.init(deliveryID: delivery.id, outcome: .expired))
            } else if delivery.push.attempt > configuration.retry.maxAttempts {
                completions.append(
                    .init(deliveryID: delivery.id, outcome: .failed(error: "attempts exhausted (last lease expired before an outcome)"))
                )
            } else {
                toSend.append(delivery)
            }
        }
        var unstarted: [UUID] = []
        await withTaskGroup(of: (ClaimedDelivery, PushResult, ContinuousClock.Duration).self) { group in
            var inFlight = 0
            for (index, delivery) in toSend.enumerated() {
                if inFlight >= configuration.concurrency, let result = await group.next() {
                    completions.append(outcome(for: result))
                    inFlight -= 1
                }
                // Checked after waiting for a free slot: a shutdown meanwhile leaves the rest unstarted.
                if isStopping {
                    unstarted.append(contentsOf: toSend[index...].map(\.id))
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
                    return (delivery, result, clock.now - start)
                }
                inFlight += 1
            }
            for await result in group {
                completions.append(outcome(for: result))
            }
        }
        await writeOutcomes(completions, unstarted: unstarted, leaseToken: batch.leaseToken)
    }

    private func outcome(for result: (ClaimedDelivery, PushResult, ContinuousClock.Duration)) -> DeliveryCompletion {
        let (delivery, pushResult, elapsed) = result
        let push = delivery.push
        let platform = push.target.platform.rawValue
        let (seconds, attoseconds) = elapsed.components
        pushTimers[push.target.platform]?.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        let outcome: DeliveryOutcome
        switch pushResult {
        case .sent(let messageID):
            outcome = .sent(messageID: messageID)
        case .retry(let after, let reason):
            let delay = configuration.retry.delay(afterAttempt: push.attempt, retryAfter: after)
            if !configuration.retry.allowsRetry(after: push.attempt) {
                outcome = .failed(error: "retries exhausted after \(push.attempt) attempts: \(reason)")
            } else if Date().addingTimeInterval(delay.secondsDouble) >= push.expiresAt {
                outcome = .expired
            } else {
                outcome = .retry(delay: delay, error: reason)
            }
        case .tokenInvalid(let reason):
            outcome = .tokenInvalid(error: reason)
        case .failed(let reason):
            outcome = .failed(error: reason)
        }
        if case .sent = outcome {
        } else {
            logger.notice(
                "push not delivered",
                metadata: [
                    "push.notification_id": "\(push.notificationID)",
                    "push.device_id": "\(push.target.deviceID)",
                    "push.platform": "\(platform)",
                    "push.attempt": "\(push.attempt)",
                    "push.outcome": "\(Self.label(outcome))",
                    "push.reason": "\(Self.reason(pushResult))",
                ]
            )
        }
        return DeliveryCompletion(deliveryID: delivery.id, outcome: outcome)
    }

    private func writeOutcomes(_ completions: [DeliveryCompletion], unstarted: [UUID], leaseToken: UUID) async {
        let queue = self.queue
        let logger = self.logger
        let timeout = configuration.databaseTimeout
        // Written from an unstructured task so that a shutdown deadline that cancelled the sends
        // cannot also cancel the bookkeeping.
        let written = await Task {
            var applied = 0
            var released = 0
            for attempt in 1...5 {
                do {
                    if applied == 0 {
                        applied = try await withDeadline(timeout) { try await queue.complete(completions, leaseToken: leaseToken) }
                    }
                    released = try await withDeadline(timeout) { try await queue.release(unstarted, leaseToken: leaseToken) }
                    return (applied, released)
                } catch {
                    logger.warning(
                        "writing outcomes failed; retrying",
                        metadata: ["error": "\(Self.describe(error))", "attempt": "\(attempt)"]
                    )
                    try? await Task.sleep(for: Self.backoff(attempt))
                }
            }
            return (applied, released)
        }.value
        if written.0 < completions.count {
            logger.warning(
                "some outcomes were not written: lease lost (rescued by another process) or database unavailable",
                metadata: ["dispatcher.lost": "\(completions.count - written.0)"]
            )
        }
        var sent = 0
        var failed = 0
        for completion in completions {
            let label = Self.label(completion.outcome)
            switch completion.outcome {
            case .sent: sent += 1
            case .failed, .tokenInvalid: failed += 1
            default: break
            }
            outcomeCounters[label]?.increment()
        }
        stats.recordSent(sent)
        stats.recordFailed(failed)
    }

    static func label(_ outcome: DeliveryOutcome) -> String {
        switch outcome {
        case .sent: "sent"
        case .retry: "retry"
        case .failed: "failed"
        case .tokenInvalid: "token_invalid"
        case .expired: "expired"
        case .cancelled: "cancelled"
        }
    }

    static func reason(_ result: PushResult) -> String {
        switch result {
        case .sent: ""
        case .retry(_, let reason), .tokenInvalid(let reason), .failed(let reason): reason
        }
    }

    static func backoff(_ failures: Int) -> Duration {
        .milliseconds(min(30_000, 100 * (1 << min(failures, 9))))
    }

    /// A loggable description of an error; PostgresNIO's descriptions never include query binds.
    static func describe(_ error: any Error) -> String {
        String(describing: error)
    }
}
