import SecurePushCore

/// A credential for one send could not be had; `result` is what the push reports instead.
struct TokenUnavailable: Error {
    /// The push's outcome (a permanent failure for refused credentials, else a retry).
    var result: PushResult
}

/// The loop every token-authenticated provider runs: get a token, send, and when the service
/// refuses the token renew it and send once more. A second refusal is a retry, never a loop.
enum TokenRenewal {
    /// Sends with a token from `token`, renewing it at most once.
    ///
    /// - Parameters:
    ///   - token: The current token (cached by the caller), or the push's result when none can be had.
    ///   - attempt: Sends with a token and classifies the answer.
    ///   - invalidate: Forgets a refused token, so the next `token()` makes a new one.
    ///   - stillRefused: The result when the renewed token is refused too.
    ///   - renewing: Called before the one renewal (for logging).
    static func send(
        token: () async throws(TokenUnavailable) -> String,
        attempt: (String) async -> ProviderVerdict,
        invalidate: (String) async -> Void,
        stillRefused: PushResult,
        renewing: () -> Void = {}
    ) async -> PushResult {
        var renewed = false
        while true {
            let current: String
            do {
                current = try await token()
            } catch {
                return error.result
            }
            switch await attempt(current) {
            case .result(let result):
                return result
            case .renewTokenAndRetry:
                await invalidate(current)
                if renewed { return stillRefused }
                renewing()
                renewed = true
            }
        }
    }
}
