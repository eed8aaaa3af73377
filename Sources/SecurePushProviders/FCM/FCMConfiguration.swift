import Foundation

/// Settings of the FCM HTTP v1 provider.
public struct FCMConfiguration: Sendable {
    /// Google's FCM endpoint.
    public static let defaultBaseURL = "https://fcm.googleapis.com"
    /// The OAuth scope FCM sends need.
    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    /// One service account per Firebase project; a device's `project` option chooses one, and the first
    /// serves devices without the option.
    public var serviceAccounts: [FCMServiceAccount]
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
    /// Builds the id-only message (docs/envelopes.md).
    public var envelope: FCMEnvelope

    /// Creates a configuration for one or more Firebase projects (the provider refuses an empty list).
    public init(
        serviceAccounts: [FCMServiceAccount],
        baseURL: String = Self.defaultBaseURL,
        caFile: String? = nil,
        requestTimeout: Duration = .seconds(10),
        tokenRenewalMargin: Duration = .seconds(300),
        quotaBackoff: Duration = .seconds(60),
        envelopes: EnvelopeSettings = EnvelopeSettings()
    ) {
        self.serviceAccounts = serviceAccounts
        self.baseURL = baseURL
        self.caFile = caFile
        self.requestTimeout = requestTimeout
        self.tokenRenewalMargin = tokenRenewalMargin
        self.quotaBackoff = quotaBackoff
        self.envelope = FCMEnvelope(settings: envelopes, defaultProject: serviceAccounts.first?.projectID ?? "")
    }
}
