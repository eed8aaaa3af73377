import Crypto
import Foundation
import JWTKit
import SecurePushCore

/// The claims of the short-lived token that authenticates one relay request (ES256, signed with the
/// installation's key). It names the installation (`iss`), the request (`htm`, `htu`: method and path;
/// `bh`: SHA-256 of the body, base64url) and itself (`jti`, 128 random bits), and lives at most
/// `RelayRequestToken.maxLifetime`: a captured token is worth one request to one route with one body, once
/// (the relay records every `jti` until it expires), for a minute at most.
public struct RelayRequestClaims: JWTPayload, Sendable {
    public var iss: IssuerClaim
    public var iat: IssuedAtClaim
    public var exp: ExpirationClaim
    public var jti: IDClaim
    public var htm: String
    public var htu: String
    public var bh: String

    public func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}

/// Signs and checks relay request tokens.
public enum RelayRequestToken {
    /// The longest a token may live (`exp - iat`).
    public static let maxLifetime: TimeInterval = 60
    /// Clock skew allowed between an installation and the relay.
    public static let leeway: TimeInterval = 30

    /// The body hash a token carries.
    public static func bodyHash(_ body: some DataProtocol) -> String {
        Data(SHA256.hash(data: body)).base64URLEncodedString
    }

    /// A token for one request of `installation`.
    public static func sign(
        installation: UUID, key: InstallationKey, method: String, path: String, body: some DataProtocol, now: Date = Date()
    ) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PrivateKey(backing: key.privateKey))
        let claims = RelayRequestClaims(
            iss: IssuerClaim(value: installation.uuidString.lowercased()), iat: IssuedAtClaim(value: now),
            exp: ExpirationClaim(value: now.addingTimeInterval(maxLifetime)),
            jti: IDClaim(value: Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64URLEncodedString), htm: method, htu: path,
            bh: bodyHash(body))
        return try await keys.sign(claims)
    }

    /// The installation a token names, before anything is checked (to find its key); `nil` when it names none.
    public static func installation(of token: String) async -> UUID? {
        guard let claims = try? await JWTKeyCollection().unverified(token, as: RelayRequestClaims.self) else { return nil }
        return UUID(canonical: Array(claims.iss.value.utf8)[...])
    }

    /// Checks `token` against the installation's public key and this request; returns its claims. Throws
    /// `RelayWireError` for any failure (the caller answers them all alike).
    public static func verify(
        _ token: String, publicKey: Data, installation: UUID, method: String, path: String, body: some DataProtocol, now: Date = Date()
    ) async throws -> RelayRequestClaims {
        let keys = JWTKeyCollection()
        do {
            await keys.add(ecdsa: try ES256PublicKey(backing: try P256.Signing.PublicKey(x963Representation: publicKey)))
        } catch {
            throw RelayWireError("the installation's stored key is unusable")
        }
        let claims: RelayRequestClaims
        do {
            claims = try await keys.verify(token, as: RelayRequestClaims.self)
        } catch {
            throw RelayWireError("the request token is invalid or expired")
        }
        let issued = claims.iat.value.timeIntervalSince1970
        let expires = claims.exp.value.timeIntervalSince1970
        guard claims.iss.value == installation.uuidString.lowercased(), issued <= now.timeIntervalSince1970 + leeway,
            expires - issued <= maxLifetime, expires >= now.timeIntervalSince1970 - leeway
        else { throw RelayWireError("the request token's times or issuer are not acceptable") }
        guard claims.htm == method, claims.htu == path, claims.bh == bodyHash(body) else {
            throw RelayWireError("the request token was made for another request")
        }
        guard claims.jti.value.utf8.count >= 16, claims.jti.value.utf8.count <= 64 else {
            throw RelayWireError("the request token's jti is malformed")
        }
        return claims
    }
}
