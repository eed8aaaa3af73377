import Foundation

/// Settings of the FCM HTTP v1 provider.
public struct FCMConfiguration: Sendable {
    /// Google's FCM endpoint.
    public static let defaultBaseURL = "https://fcm.googleapis.com"
    /// The OAuth scope FCM sends need.
    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    /// The service account that signs the OAuth grant.
    public var serviceAccount: FCMServiceAccount
    /// Base URL of the FCM API (overridable for tests).
    public var baseURL: String
    /// PEM CA certificates to trust instead of the system store (tests).
    public var caFile: String?
    /// Deadline of one request.
    public var requestTimeout: Duration
    /// An access token is renewed this long before it expires.
    public var tokenRenewalMargin: Duration
    /// Back-off when FCM says QUOTA_EXCEEDED without a `Retry-After`.
    public var quotaBackoff: Duration

    /// Creates a configuration.
    public init(
        serviceAccount: FCMServiceAccount,
        baseURL: String = Self.defaultBaseURL,
        caFile: String? = nil,
        requestTimeout: Duration = .seconds(10),
        tokenRenewalMargin: Duration = .seconds(300),
        quotaBackoff: Duration = .seconds(60)
    ) {
        self.serviceAccount = serviceAccount
        self.baseURL = baseURL
        self.caFile = caFile
        self.requestTimeout = requestTimeout
        self.tokenRenewalMargin = tokenRenewalMargin
        self.quotaBackoff = quotaBackoff
    }
}
