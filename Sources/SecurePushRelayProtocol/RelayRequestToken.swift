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

/// The rules of relay request tokens; `RelayTokenSigner` signs them and `RelayTokenVerifier` checks them.
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
        try await RelayTokenSigner(installation: installation, key: key).sign(method: method, path: path, body: body, now: now)
    }

    /// The installation a token names, before anything is checked (to find its key): its header's `kid`, or
    /// else its `iss`; `nil` when it names none. (Signing checks that the two agree: `iss` must be the
    /// installation whose key verifies the token.)
    public static func installation(of token: String) async -> UUID? {
        struct Header: Decodable { var kid: String? }
        if let end = token.utf8.firstIndex(of: UInt8(ascii: ".")), let bytes = Data(base64URLEncoded: String(token[..<end])),
            let kid = (try? JSONDecoder().decode(Header.self, from: bytes))?.kid
        {
            return UUID(canonical: Array(kid.utf8)[...])
        }
        guard let claims = try? await JWTKeyCollection().unverified(token, as: RelayRequestClaims.self) else { return nil }
        return UUID(canonical: Array(claims.iss.value.utf8)[...])
    }
}
