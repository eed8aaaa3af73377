import Foundation

/// The dispatcher's pure decisions: whether a claimed delivery is sent at all, and what a platform's
/// answer means for it (sent, retry later, expire, fail). No I/O, no clock of its own: table-tested.
public enum DeliveryDecision {
    /// The outcome to record instead of sending, or `nil` when the delivery should be pushed now.
    public static func beforeSending(_ delivery: ClaimedDelivery, maxAttempts: Int, now: Date) -> DeliveryOutcome? {
        if !delivery.deviceActive {
            return .cancelled(reason: "device deactivated")
        }
        if delivery.push.expiresAt <= now {
            return .expired
        }
        if delivery.push.attempt > maxAttempts {
            return .failed(error: "attempts exhausted (last lease expired before an outcome)")
        }
        return nil
    }

    /// The outcome of `result` for `push`. A retry that the policy no longer allows fails with the last
    /// reason; a retry that would run at or after the notification's expiry expires it now.
    /// `random` (0...1) drives the policy's jitter.
    public static func outcome(for result: PushResult, of push: Push, policy: RetryPolicy, now: Date, random: Double) -> DeliveryOutcome {
        switch result {
        case .sent(let messageID):
            return .sent(messageID: messageID)
        case .retry(let after, let reason, _):
            guard policy.allowsRetry(after: push.attempt) else {
                return .failed(error: "retries exhausted after \(push.attempt) attempts: \(reason)")
            }
            let delay = policy.delay(afterAttempt: push.attempt, retryAfter: after, random: random)
            if now.addingTimeInterval(delay.secondsDouble) >= push.expiresAt {
                return .expired
            }
            return .retry(delay: delay, error: reason)
        case .tokenInvalid(let reason):
            return .tokenInvalid(error: reason)
        case .failed(let reason):
            return .failed(error: reason)
        }
    }
}
