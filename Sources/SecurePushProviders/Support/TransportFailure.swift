import AsyncHTTPClient
import SecurePushCore

/// Turns a transport error into a `.retry` whose reason names no URL, token or credential. Timeouts and
/// transport errors are the provider's (`.provider`: they count against its circuit breaker); a request
/// we cancelled ourselves says nothing about the provider (`.device`).
package enum TransportFailure {
    /// The retry result for an error thrown by `HTTPClient.execute` or body collection.
    package static func result(_ error: any Error, platform: String) -> PushResult {
        if let error = error as? HTTPClientError, error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
            return .retry(after: nil, reason: "\(platform) request timed out", scope: .provider)
        }
        if error is CancellationError {
            return .retry(after: nil, reason: "\(platform) request cancelled", scope: .device)
        }
        return .retry(after: nil, reason: "\(platform) transport error (\(String(describing: type(of: error))))", scope: .provider)
    }
}
