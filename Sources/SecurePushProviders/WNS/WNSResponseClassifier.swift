import SecurePushCore

/// Maps a WNS answer (status, `Retry-After`, `X-WNS-Msg-ID`) onto a `PushResult`, following
/// Microsoft's response codes. 401 is reported separately: the provider renews its access token and retries.
/// 406 ("this cloud service exceeded its throttle limit"), 429 and 5xx are the service's own trouble or a
/// throttle on the whole sender: they count against the circuit breaker of the channel's host.
enum WNSResponseClassifier {
    static func classify(status: Int, retryAfter: Duration?, throttleBackoff: Duration, msgID: String?) -> ProviderVerdict {
        let label = "WNS \(status)"
        switch status {
        case 200...299:
            return .result(.sent(messageID: msgID))
        case 401:
            return .renewTokenAndRetry
        case 404, 410:
            // The channel is not valid (404) or has expired (410): drop it.
            return .result(.tokenInvalid(reason: label))
        case 406:
            return .result(.retry(after: retryAfter ?? throttleBackoff, reason: label + " throttled", scope: .provider))
        case 429, 500...599:
            return .result(.retry(after: retryAfter, reason: label, scope: .provider))
        default:
            // 403 configuration, 413 too large, other 4xx: will not get better by itself.
            return .result(.failed(reason: label))
        }
    }
}
