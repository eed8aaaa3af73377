import SecurePushCore
import SecurePushStore

extension SecurePushConfiguration {
    /// The circuit breakers' policy from `SECUREPUSH_CIRCUIT_BREAKER` (`on`/`off`), `SECUREPUSH_CIRCUIT_FAILURES`
    /// (provider failures in a row that open one), `SECUREPUSH_CIRCUIT_OPEN` and `SECUREPUSH_CIRCUIT_MAX_OPEN`
    /// (the first and the longest open time) and `SECUREPUSH_CIRCUIT_USERS` (distinct users whose pushes must
    /// fail before a Web Push or WNS service's breaker opens).
    static func circuitBreaker(_ values: ConfigurationValues) throws -> CircuitBreakerPolicy {
        var policy = CircuitBreakerPolicy()
        policy.enabled = try values.choice("SECUREPUSH_CIRCUIT_BREAKER", default: "on", allowed: ["on", "off"]) == "on"
        policy.consecutiveFailures = try values.int("SECUREPUSH_CIRCUIT_FAILURES", default: policy.consecutiveFailures, in: 1...10_000)
        policy.distinctUsers = try values.int("SECUREPUSH_CIRCUIT_USERS", default: policy.distinctUsers, in: 1...1_000)
        policy.openDuration = try values.duration(
            "SECUREPUSH_CIRCUIT_OPEN", default: policy.openDuration, in: .milliseconds(10)...(.seconds(3600)))
        policy.maxOpenDuration = try values.duration(
            "SECUREPUSH_CIRCUIT_MAX_OPEN", default: policy.maxOpenDuration, in: .milliseconds(10)...(.seconds(86_400)))
        guard policy.maxOpenDuration >= policy.openDuration else {
            throw ConfigurationError("SECUREPUSH_CIRCUIT_MAX_OPEN must not be shorter than SECUREPUSH_CIRCUIT_OPEN")
        }
        return policy
    }
}
