import SecurePushCore
import Testing

@Suite("Retry policy")
struct RetryPolicyTests {
    let policy = RetryPolicy(maxAttempts: 5, baseDelay: .seconds(1), maxDelay: .seconds(10), jitter: 0.1)

    @Test("delays grow exponentially within the jitter band and stop at the cap")
    func exponentialWithCap() {
        #expect(policy.delay(afterAttempt: 1, retryAfter: nil, random: 0.5) == .seconds(1))
        #expect(policy.delay(afterAttempt: 2, retryAfter: nil, random: 0.5) == .seconds(2))
        #expect(policy.delay(afterAttempt: 3, retryAfter: nil, random: 0.5) == .seconds(4))
        #expect(policy.delay(afterAttempt: 9, retryAfter: nil, random: 0.5) == .seconds(10))
        #expect(policy.delay(afterAttempt: 1, retryAfter: nil, random: 0).wholeMilliseconds == 900)
        #expect((1099...1100).contains(policy.delay(afterAttempt: 1, retryAfter: nil, random: 1).wholeMilliseconds))
        #expect((10_999...11_000).contains(policy.delay(afterAttempt: 1000, retryAfter: nil, random: 1).wholeMilliseconds))
    }

    @Test("a provider's Retry-After is a floor")
    func retryAfterIsAFloor() {
        #expect(policy.delay(afterAttempt: 1, retryAfter: .seconds(60), random: 0.5) == .seconds(60))
        #expect(policy.delay(afterAttempt: 3, retryAfter: .milliseconds(10), random: 0.5) == .seconds(4))
    }

    @Test("attempt limit")
    func attemptLimit() {
        #expect(policy.allowsRetry(after: 4))
        #expect(!policy.allowsRetry(after: 5))
    }
}
