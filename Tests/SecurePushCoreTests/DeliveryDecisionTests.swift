import Foundation
import SecurePushCore
import Testing

@Suite("Delivery decisions")
struct DeliveryDecisionTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let policy = RetryPolicy(maxAttempts: 3, baseDelay: .seconds(10), maxDelay: .seconds(100), jitter: 0)

    static func push(attempt: Int, expiresIn: TimeInterval = 3600) -> Push {
        Push(
            notificationID: NotificationID(UUID()),
            target: PushTarget(deviceID: UUID(), platform: .apns, token: "00"),
            expiresAt: now.addingTimeInterval(expiresIn),
            attempt: attempt
        )
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var label: String
        var result: PushResult
        var attempt: Int
        var expiresIn: TimeInterval
        var expected: DeliveryOutcome
        var testDescription: String { label }
    }

    static let rows: [Row] = [
        Row(label: "sent", result: .sent(messageID: "m"), attempt: 1, expiresIn: 3600, expected: .sent(messageID: "m")),
        Row(
            label: "first retry: base delay", result: .retry(after: nil, reason: "503"), attempt: 1, expiresIn: 3600,
            expected: .retry(delay: .seconds(10), error: "503")),
        Row(
            label: "second retry: doubled", result: .retry(after: nil, reason: "503"), attempt: 2, expiresIn: 3600,
            expected: .retry(delay: .seconds(20), error: "503")),
        Row(
            label: "Retry-After above the backoff is a floor", result: .retry(after: .seconds(60), reason: "429"), attempt: 1,
            expiresIn: 3600, expected: .retry(delay: .seconds(60), error: "429")),
        Row(
            label: "Retry-After below the backoff is ignored", result: .retry(after: .seconds(1), reason: "429"), attempt: 2,
            expiresIn: 3600, expected: .retry(delay: .seconds(20), error: "429")),
        Row(
            label: "last attempt: fails with the last reason", result: .retry(after: nil, reason: "503"), attempt: 3, expiresIn: 3600,
            expected: .failed(error: "retries exhausted after 3 attempts: 503")),
        Row(
            label: "retry at expiry: expires now", result: .retry(after: nil, reason: "503"), attempt: 1, expiresIn: 10,
            expected: .expired),
        Row(
            label: "retry just before expiry", result: .retry(after: nil, reason: "503"), attempt: 1, expiresIn: 11,
            expected: .retry(delay: .seconds(10), error: "503")),
        Row(
            label: "dead token", result: .tokenInvalid(reason: "APNs 410 Unregistered"), attempt: 1, expiresIn: 3600,
            expected: .tokenInvalid(error: "APNs 410 Unregistered")),
        Row(
            label: "permanent failure", result: .failed(reason: "APNs 400 BadTopic"), attempt: 1, expiresIn: 3600,
            expected: .failed(error: "APNs 400 BadTopic")),
    ]

    @Test("a platform's answer decides the outcome", arguments: rows)
    func outcome(row: Row) {
        let push = Self.push(attempt: row.attempt, expiresIn: row.expiresIn)
        let outcome = DeliveryDecision.outcome(for: row.result, of: push, policy: Self.policy, now: Self.now, random: 0.5)
        #expect(outcome == row.expected)
    }

    @Test("before sending: inactive devices cancel, expired notifications expire, exhausted attempts fail")
    func beforeSending() {
        let fresh = ClaimedDelivery(id: UUID(), push: Self.push(attempt: 1))
        #expect(DeliveryDecision.beforeSending(fresh, maxAttempts: 3, now: Self.now) == nil)
        let inactive = ClaimedDelivery(id: UUID(), push: Self.push(attempt: 1), deviceActive: false)
        #expect(DeliveryDecision.beforeSending(inactive, maxAttempts: 3, now: Self.now) == .cancelled(reason: "device deactivated"))
        let expired = ClaimedDelivery(id: UUID(), push: Self.push(attempt: 1, expiresIn: 0))
        #expect(DeliveryDecision.beforeSending(expired, maxAttempts: 3, now: Self.now) == .expired)
        let exhausted = ClaimedDelivery(id: UUID(), push: Self.push(attempt: 4))
        #expect(
            DeliveryDecision.beforeSending(exhausted, maxAttempts: 3, now: Self.now)
                == .failed(error: "attempts exhausted (last lease expired before an outcome)"))
        let lastAllowed = ClaimedDelivery(id: UUID(), push: Self.push(attempt: 3))
        #expect(DeliveryDecision.beforeSending(lastAllowed, maxAttempts: 3, now: Self.now) == nil)
    }

    @Test("outcome kinds: the names stored in the history, and which end a delivery")
    func kinds() {
        #expect(DeliveryOutcome.Kind.allCases.map(\.rawValue) == ["sent", "retry", "failed", "token_invalid", "expired", "cancelled", "superseded"])
        #expect(!DeliveryOutcome.Kind.final.contains(.retry))
        #expect(DeliveryOutcome.Kind.final.count == 6)
    }
}
