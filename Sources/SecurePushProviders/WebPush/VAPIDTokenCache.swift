import Crypto
import Foundation
import NIOConcurrencyHelpers

/// VAPID JWTs per push-service origin, reused until an hour before they expire.
final class VAPIDTokenCache: Sendable {
    private let key: P256.Signing.PrivateKey
    private let subject: String
    private let lifetime: TimeInterval
    private let tokens = NIOLockedValueBox<[String: (token: String, expiresAt: Date)]>([:])

    init(key: P256.Signing.PrivateKey, subject: String, lifetime: Duration) {
        self.key = key
        self.subject = subject
        self.lifetime = TimeInterval(lifetime.components.seconds)
    }

    /// The JWT for `origin` (`https://host[:port]`).
    func token(for origin: String) throws -> String {
        try tokens.withLockedValue { tokens in
            let now = Date()
            if let cached = tokens[origin], cached.expiresAt.timeIntervalSince(now) > min(3600, lifetime / 2) {
                return cached.token
            }
            let expiresAt = now.addingTimeInterval(lifetime)
            let token = try CompactJWT.es256(
                header: ["typ": "JWT", "alg": "ES256"],
                claims: ["aud": origin, "exp": Int(expiresAt.timeIntervalSince1970), "sub": subject],
                key: key
            )
            tokens[origin] = (token, expiresAt)
            return token
        }
    }
}
