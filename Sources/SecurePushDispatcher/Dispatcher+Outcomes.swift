import Foundation
import Logging
import Metrics
import SecurePushCore

extension Dispatcher {
    /// The completion of one finished send (timed, logged when not delivered).
    func outcome(for sent: SendResult) -> DeliveryCompletion {
        let push = sent.delivery.push
        pushTimers[push.target.platform]?.recordNanoseconds(sent.elapsed.wholeNanoseconds)
        let outcome = decide(sent.result, of: push)
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

    /// What `result` means for `push` now, under the retry policy (with its jitter).
    func decide(_ result: PushResult, of push: Push) -> DeliveryOutcome {
        DeliveryDecision.outcome(for: result, of: push, policy: configuration.retry, now: Date(), random: Double.random(in: 0...1))
    }

    /// Writes outcomes, releases unstarted claims and those a circuit breaker kept back (after its delay),
    /// retrying while the database is unavailable: through a failover, until the write lands on the new
    /// primary (it is still fenced by the lease token, so a batch rescued meanwhile is not touched), for at
    /// most the lease's end plus one lease. An outcome abandoned instead would be pushed again once its
    /// lease expired. The lane is not cancelled by the shutdown deadline (only its sends are), so this
    /// bookkeeping runs.
    func writeOutcomes(_ completions: [DeliveryCompletion], unstarted: [UUID], deferred: [Deferred], leaseToken: UUID, lease: LeaseDeadline) async {
        let queue = self.queue
        let timeout = min(configuration.databaseTimeout, .seconds(5))
        let retryUntil = lease.instant + configuration.leaseDuration
        var applied = 0
        var completed = false
        var releases = [Deferred(ids: unstarted, delay: .zero)] + deferred
        var attempt = 0
        while !(completed && releases.isEmpty), attempt < 5 || (!isStopping && ContinuousClock.now < retryUntil) {
            attempt += 1
            do {
                if !completed {
                    applied = try await withDeadline(timeout) { try await queue.complete(completions, leaseToken: leaseToken) }
                    completed = true
                }
                while let release = releases.first {
                    _ = try await withDeadline(timeout) { try await queue.release(release.ids, leaseToken: leaseToken, delay: release.delay) }
                    releases.removeFirst()
                }
            } catch {
                logger.databaseError("writing outcomes failed; retrying", error, metadata: ["attempt": "\(attempt)"])
                try? await Task.sleep(for: min(.seconds(1), Self.backoff(attempt)))
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
}
