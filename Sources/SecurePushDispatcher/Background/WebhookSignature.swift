import Crypto
import Foundation
import SecurePushCore

/// The signature of an outcome webhook request, as the Standard Webhooks specification defines it
/// (standardwebhooks.com, the scheme Svix and others use): `webhook-signature: v1,<base64 HMAC-SHA256>` over
/// `<webhook-id>.<webhook-timestamp>.<body>` with the shared secret, the secret written `whsec_<base64>`.
/// Receivers verify it with any Standard Webhooks library and refuse timestamps too far from their clock.
public struct WebhookSignature: Sendable {
    let key: SymmetricKey

    /// A signer for `secret` (`whsec_` followed by the base64 of at least 24 random bytes).
    public init(secret: String) throws {
        guard secret.hasPrefix("whsec_"), let bytes = Data(base64Encoded: String(secret.dropFirst(6))), bytes.count >= 24 else {
            throw ConfigurationError(
                "SECUREPUSH_WEBHOOK_SECRET must be whsec_ followed by the base64 of at least 24 random bytes (e.g. whsec_$(openssl rand -base64 32))")
        }
        key = SymmetricKey(data: bytes)
    }

    /// The `webhook-signature` header's value for a request with `id`, `timestamp` (seconds since 1970) and `body`.
    public func sign(id: String, timestamp: Int64, body: [UInt8]) -> String {
        var message = Data("\(id).\(timestamp).".utf8)
        message.append(contentsOf: body)
        return "v1," + Data(HMAC<SHA256>.authenticationCode(for: message, using: key)).base64EncodedString()
    }
}
