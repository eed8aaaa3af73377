import Foundation
import SecurePushCore

/// Classifies FCM HTTP v1 errors on `details[].errorCode` (not on `status`), per Google's table.
/// A 401 without an errorCode is reported separately: the provider renews its access token and retries.
/// UNAVAILABLE, INTERNAL, other 5xx and the project quota (QUOTA_EXCEEDED, 429) count against the FCM
/// circuit breaker; a QUOTA_EXCEEDED about one device's or topic's message rate does not.
enum FCMErrorClassifier {
    static func classify(status: Int, body: Data, retryAfter: Duration?, quotaBackoff: Duration) -> ProviderVerdict {
        let error = (try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["error"] as? [String: Any]
        let details = error?["details"] as? [[String: Any]] ?? []
        let errorCode = details.lazy.compactMap { $0["errorCode"] as? String }.first
        let label = "FCM \(status) \(errorCode ?? (error?["status"] as? String) ?? "error")"
        switch errorCode {
        case "UNREGISTERED"?, "SENDER_ID_MISMATCH"?:
            return .result(.tokenInvalid(reason: label))
        case "INVALID_ARGUMENT"?:
            return .result(mentionsInvalidToken(error: error, details: details) ? .tokenInvalid(reason: label) : .failed(reason: label))
        case "QUOTA_EXCEEDED"?:
            let scope: FailureScope = isPerTargetQuota(error: error) ? .device : .provider
            return .result(.retry(after: retryAfter ?? quotaBackoff, reason: label, scope: scope))
        case "UNAVAILABLE"?, "INTERNAL"?:
            return .result(.retry(after: retryAfter, reason: label, scope: .provider))
        case "THIRD_PARTY_AUTH_ERROR"?:
            return .result(.failed(reason: label))
        default:
            break
        }
        switch status {
        case 401:
            return .renewTokenAndRetry
        case 429:
            return .result(.retry(after: retryAfter ?? quotaBackoff, reason: label, scope: .provider))
        case 500...599:
            return .result(.retry(after: retryAfter, reason: label, scope: .provider))
        default:
            return .result(.failed(reason: label))
        }
    }

    /// Whether a QUOTA_EXCEEDED is about one target's message rate ("device message rate", "topic
    /// message rate") rather than the project's quota.
    static func isPerTargetQuota(error: [String: Any]?) -> Bool {
        let message = (error?["message"] as? String ?? "").lowercased()
        return message.contains("device message rate") || message.contains("topic message rate")
    }

    /// INVALID_ARGUMENT drops the token only when the error is about the device's address: the registration
    /// token (`message.token`) or the Firebase Installation ID (`message.fid`).
    static func mentionsInvalidToken(error: [String: Any]?, details: [[String: Any]]) -> Bool {
        for detail in details {
            for violation in detail["fieldViolations"] as? [[String: Any]] ?? []
            where ["message.token", "message.fid"].contains(violation["field"] as? String ?? "") {
                return true
            }
        }
        let message = (error?["message"] as? String ?? "").lowercased()
        return message.contains("registration token") || message.contains("message.fid") || message.contains("installation id")
    }
}
