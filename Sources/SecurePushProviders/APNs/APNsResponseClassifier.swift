import SecurePushCore

/// Maps an APNs answer (status, `reason`, `Retry-After`) onto a `PushResult`, following Apple's
/// error table. `ExpiredProviderToken` is reported separately: the provider renews its JWT and retries.
/// 5xx and 429 `TooManyProviderTokenUpdates` (a throttle on the whole team) are the provider's trouble and
/// count against the APNs circuit breaker; 429 `TooManyRequests` is a per-device rate and `IdleTimeout`
/// a connection's, so neither does.
enum APNsResponseClassifier {
    static func classify(status: Int, reason: String?, retryAfter: Duration?, apnsID: String?) -> ProviderVerdict {
        let reason = reason ?? "Unknown"
        let label = "APNs \(status) \(reason)"
        switch status {
        case 200:
            return .result(.sent(messageID: apnsID))
        case 400:
            switch reason {
            case "BadDeviceToken", "DeviceTokenNotForTopic":
                return .result(.tokenInvalid(reason: label))
            case "IdleTimeout":
                return .result(.retry(after: nil, reason: label, scope: .device))
            default:
                // Listed and unlisted 400 reasons alike: the request itself is wrong.
                return .result(.failed(reason: label))
            }
        case 403:
            if reason == "ExpiredProviderToken" { return .renewTokenAndRetry }
            return .result(.failed(reason: label))
        case 404, 405, 413:
            return .result(.failed(reason: label))
        case 410:
            return .result(.tokenInvalid(reason: label))
        case 429:
            let scope: FailureScope = reason == "TooManyProviderTokenUpdates" ? .provider : .device
            return .result(.retry(after: retryAfter, reason: label, scope: scope))
        case 500...599:
            return .result(.retry(after: retryAfter, reason: label, scope: .provider))
        default:
            // An answer outside Apple's table: a 4xx will not get better by itself, anything else might.
            return .result(status < 500 ? .failed(reason: label) : .retry(after: retryAfter, reason: label, scope: .provider))
        }
    }

    /// Whether a failure should be logged at error level (configuration or our bug).
    static func isConfigurationProblem(status: Int) -> Bool {
        [400, 403, 404, 405, 413].contains(status)
    }
}
