extension CircuitBreaker.Result {
    /// What a platform's answer says about the push service: only provider-side transient failures
    /// count against it; any other answer (accepted, per-device, permanent) shows it is up.
    public init(_ result: PushResult) {
        switch result {
        case .retry(let after, _, .provider):
            self = .failure(retryAfter: after)
        case .sent, .retry, .tokenInvalid, .failed:
            self = .success
        }
    }
}
