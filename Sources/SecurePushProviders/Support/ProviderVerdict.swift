import SecurePushCore

/// What a provider does with one answer from a push service: report a result, or renew its
/// credential (APNs provider JWT, OAuth access token) and send once more. Every platform's
/// classifier returns this; `TokenRenewal` acts on it.
enum ProviderVerdict: Equatable, Sendable {
    /// The push's outcome.
    case result(PushResult)
    /// The service refused the credential as expired or revoked.
    case renewTokenAndRetry
}
