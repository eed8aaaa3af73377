import Crypto
import Foundation
import JWTKit

/// Checks relay request tokens (`RelayRequestToken`) against one installation's public key, made ready once
/// (the relay keeps one per installation it has seen).
public struct RelayTokenVerifier: Sendable {
    let keys: JWTKeyCollection

    /// A verifier of tokens signed with the private half of `publicKey` (X9.63). Throws `RelayWireError`
    /// when the key is unusable.
    public init(publicKey: Data) async throws {
        let keys = JWTKeyCollection()
        do {
            await keys.add(ecdsa: try ES256PublicKey(backing: try P256.Signing.PublicKey(x963Representation: publicKey)))
        } catch {
            throw RelayWireError("the installation's stored key is unusable")
        }
        self.keys = keys
    }

    /// Checks `token` for this request (`installation`, `method`, `path`, `body`); returns its claims. Throws
    /// `RelayWireError` for any failure (the caller answers them all alike).
    public func verify(
        _ token: String, installation: UUID, method: String, path: String, body: some DataProtocol, now: Date = Date()
    ) async throws -> RelayRequestClaims {
        let claims: RelayRequestClaims
        do {
            claims = try await keys.verify(token, as: RelayRequestClaims.self)
        } catch {
            throw RelayWireError("the request token is invalid or expired")
        }
        let issued = claims.iat.value.timeIntervalSince1970
        let expires = claims.exp.value.timeIntervalSince1970
        let leeway = RelayRequestToken.leeway
        guard claims.iss.value == installation.uuidString.lowercased(), issued <= now.timeIntervalSince1970 + leeway,
            expires - issued <= RelayRequestToken.maxLifetime, expires >= now.timeIntervalSince1970 - leeway
        else { throw RelayWireError("the request token's times or issuer are not acceptable") }
        guard claims.htm == method, claims.htu == path, claims.bh == RelayRequestToken.bodyHash(body) else {
            throw RelayWireError("the request token was made for another request")
        }
        guard claims.jti.value.utf8.count >= 16, claims.jti.value.utf8.count <= 64 else {
            throw RelayWireError("the request token's jti is malformed")
        }
        return claims
    }
}
