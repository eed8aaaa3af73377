import Foundation
import JWTKit
import SecurePushCore

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
    /// Not before: a token is refused before this time (with `UserTokenVerifier.leeway`).
    public var nbf: NotBeforeClaim?
    /// Issued at: a token issued in the future (beyond the leeway) is refused; with a maximum lifetime,
    /// `exp - iat` is bounded.
    public var iat: IssuedAtClaim?

    /// Creates claims (used by `securepush dev-token`).
    public init(
        subject: String, expiresAt: Date, issuer: String? = nil, audience: String? = nil, notBefore: Date? = nil, issuedAt: Date? = nil
    ) {
        self.sub = SubjectClaim(value: subject)
        self.exp = ExpirationClaim(value: expiresAt)
        self.iss = issuer.map { IssuerClaim(value: $0) }
        self.aud = audience.map { AudienceClaim(value: [$0]) }
        self.nbf = notBefore.map { NotBeforeClaim(value: $0) }
        self.iat = issuedAt.map { IssuedAtClaim(value: $0) }
    }

    public func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}

/// Verifies the app's user JWTs: HS256 with a shared secret, or ES256/RS256 with a public key. The
/// header's `alg` must be the configured algorithm; `exp` is required; `nbf` and `iat` are checked with
/// `leeway`; an optional maximum lifetime bounds `exp - iat` (or `exp - now` without `iat`); `sub` must be
/// 1 to 256 characters without control characters.
public struct UserTokenVerifier: Sendable {
    /// Clock skew allowed between the token's issuer and this server for `nbf` and `iat`.
    public static let leeway: TimeInterval = 60

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
    /// The `alg` every token's header must name (`HS256`, `ES256` or `RS256`).
    let algorithm: String
    /// The longest `exp - iat` accepted (`SECUREPUSH_USER_JWT_MAX_LIFETIME`); `nil`: no bound.
    let maxLifetime: Duration?

    /// Builds the verifier; an unreadable key is a configuration error naming the setting.
    public init(key: Key, issuer: String?, audience: String?, maxLifetime: Duration? = nil) async throws {
        let keys = JWTKeyCollection()
        switch key {
        case .hs256(let secret):
            await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
            self.algorithm = "HS256"
        case .publicKey(let pem):
            if let ecdsa = try? ES256PublicKey(pem: pem) {
                await keys.add(ecdsa: ecdsa)
                self.algorithm = "ES256"
            } else if let rsa = try? Insecure.RSA.PublicKey(pem: pem) {
                await keys.add(rsa: rsa, digestAlgorithm: .sha256)
                self.algorithm = "RS256"
            } else {
                throw UserTokenError.unusableKey
            }
        }
        self.keys = keys
        self.issuer = issuer
        self.audience = audience
        self.maxLifetime = maxLifetime
    }

    private init(keys: JWTKeyCollection) {
        self.keys = keys
        self.issuer = nil
        self.audience = nil
        self.algorithm = "none-accepted"
        self.maxLifetime = nil
    }

    /// A verifier without a key, which accepts no token: for a process that serves no user route (the
    /// dispatcher's operations listener).
    public static func acceptingNone() -> UserTokenVerifier {
        UserTokenVerifier(keys: JWTKeyCollection())
    }

    /// The user id of a valid token; throws for an invalid, expired, not yet valid or foreign token.
    public func userID(from token: String, now: Date = Date()) async throws -> String {
        guard Self.headerAlgorithm(token) == algorithm else { throw UserTokenError.wrongAlgorithm }
        guard !Self.hasDuplicateClaims(token) else { throw UserTokenError.duplicateClaim }
        let claims = try await keys.verify(token, as: UserClaims.self)
        if let issuer, claims.iss?.value != issuer { throw UserTokenError.wrongIssuer }
        if let audience {
            guard let aud = claims.aud, aud.value.contains(audience) else { throw UserTokenError.wrongAudience }
        }
        if let nbf = claims.nbf, nbf.value.timeIntervalSince(now) > Self.leeway { throw UserTokenError.notYetValid }
        if let iat = claims.iat, iat.value.timeIntervalSince(now) > Self.leeway { throw UserTokenError.notYetValid }
        if let maxLifetime {
            let start = claims.iat.map { min($0.value, now) } ?? now
            guard claims.exp.value.timeIntervalSince(start) <= maxLifetime.secondsDouble + Self.leeway else { throw UserTokenError.tooLong }
        }
        let subject = claims.sub.value
        guard (1...256).contains(subject.unicodeScalars.count), !subject.unicodeScalars.contains(where: Self.isControl) else {
            throw UserTokenError.badSubject
        }
        return subject
    }

    /// The `alg` of a compact JWT's header, `nil` when the header is not base64url JSON with a string `alg`.
    static func headerAlgorithm(_ token: String) -> String? {
        guard let dot = token.utf8.firstIndex(of: UInt8(ascii: ".")), token.utf8.distance(from: token.utf8.startIndex, to: dot) <= 1024,
            let header = Data(base64URLEncoded: String(token[..<dot])),
            let object = try? JSONSerialization.jsonObject(with: header) as? [String: Any]
        else { return nil }
        return object["alg"] as? String
    }

    /// Whether the claims (the second segment) name a member twice; an undecodable segment is left to the verifier.
    static func hasDuplicateClaims(_ token: String) -> Bool {
        let segments = token.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard segments.count == 3, let claims = Data(base64URLEncoded: String(segments[1])) else { return false }
        return JSONObjectKeys.hasDuplicates([UInt8](claims))
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned: true
        default: false
        }
    }

    /// Signs a token (HS256 deployments; for `securepush dev-token` and tests).
    public func sign(_ claims: UserClaims) async throws -> String {
        try await keys.sign(claims)
    }
}

/// Why a user token was refused (never shown to clients in detail).
public enum UserTokenError: Error, Sendable {
    case unusableKey, wrongIssuer, wrongAudience, badSubject, wrongAlgorithm, notYetValid, tooLong, duplicateClaim
}
