import Foundation
import JWTKit

/// The claims SecurePush reads from the app's user JWT.
public struct UserClaims: JWTPayload, Sendable {
    /// The app's user id.
    public var sub: SubjectClaim
    /// Required: tokens without an expiry are refused.
    public var exp: ExpirationClaim
    /// Issuer, checked when configured.
    public var iss: IssuerClaim?
    /// Audience, checked when configured.
    public var aud: AudienceClaim?

    /// Creates claims (used by `securepush dev-token`).
    public init(subject: String, expiresAt: Date, issuer: String? = nil, audience: String? = nil) {
        self.sub = SubjectClaim(value: subject)
        self.exp = ExpirationClaim(value: expiresAt)
        self.iss = issuer.map { IssuerClaim(value: $0) }
        self.aud = audience.map { AudienceClaim(value: [$0]) }
    }

    public func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}

/// Verifies the app's user JWTs: HS256 with a shared secret, or ES256/RS256 with a public key.
public struct UserTokenVerifier: Sendable {
    /// How user tokens are signed.
    public enum Key: Sendable {
        /// HMAC-SHA256 with a shared secret.
        case hs256(secret: String)
        /// A PEM public key: EC P-256 (ES256) or RSA (RS256).
        case publicKey(pem: String)
    }

    let keys: JWTKeyCollection
    let issuer: String?
    let audience: String?

    /// Builds the verifier; an unreadable key is a configuration error naming the setting.
    public init(key: Key, issuer: String?, audience: String?) async throws {
        let keys = JWTKeyCollection()
        switch key {
        case .hs256(let secret):
            await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        case .publicKey(let pem):
            if let ecdsa = try? ES256PublicKey(pem: pem) {
                await keys.add(ecdsa: ecdsa)
            } else if let rsa = try? Insecure.RSA.PublicKey(pem: pem) {
                await keys.add(rsa: rsa, digestAlgorithm: .sha256)
            } else {
                throw UserTokenError.unusableKey
            }
        }
        self.keys = keys
        self.issuer = issuer
        self.audience = audience
    }

    private init(keys: JWTKeyCollection) {
        self.keys = keys
        self.issuer = nil
        self.audience = nil
    }

    /// A verifier without a key, which accepts no token: for a process that serves no user route (the
    /// dispatcher's operations listener).
    public static func acceptingNone() -> UserTokenVerifier {
        UserTokenVerifier(keys: JWTKeyCollection())
    }

    /// The user id of a valid token; throws for an invalid, expired or foreign token.
    public func userID(from token: String) async throws -> String {
        let claims = try await keys.verify(token, as: UserClaims.self)
        if let issuer, claims.iss?.value != issuer { throw UserTokenError.wrongIssuer }
        if let audience {
            guard let aud = claims.aud, aud.value.contains(audience) else { throw UserTokenError.wrongAudience }
        }
        let subject = claims.sub.value
        guard (1...256).contains(subject.count) else { throw UserTokenError.badSubject }
        return subject
    }

    /// Signs a token (HS256 deployments; for `securepush dev-token` and tests).
    public func sign(_ claims: UserClaims) async throws -> String {
        try await keys.sign(claims)
    }
}

/// Why a user token was refused (never shown to clients in detail).
public enum UserTokenError: Error, Sendable {
    case unusableKey, wrongIssuer, wrongAudience, badSubject
}
