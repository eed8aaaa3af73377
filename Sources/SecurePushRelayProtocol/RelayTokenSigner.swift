import Foundation
import JWTKit
import SecurePushCore

/// Signs an installation's relay request tokens (`RelayRequestToken`) with its key, made ready once.
public struct RelayTokenSigner: Sendable {
    public let installation: UUID
    let keys: JWTKeyCollection

    /// A signer for `installation` with its private key.
    public init(installation: UUID, key: InstallationKey) async throws {
        self.installation = installation
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PrivateKey(backing: key.privateKey))
        self.keys = keys
    }

    /// A token for one request: `method` to `path` with `body`, valid for `RelayRequestToken.maxLifetime`.
    public func sign(method: String, path: String, body: some DataProtocol, now: Date = Date()) async throws -> String {
        let claims = RelayRequestClaims(
            iss: IssuerClaim(value: installation.uuidString.lowercased()), iat: IssuedAtClaim(value: now),
            exp: ExpirationClaim(value: now.addingTimeInterval(RelayRequestToken.maxLifetime)),
            jti: IDClaim(value: Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64URLEncodedString), htm: method, htu: path,
            bh: RelayRequestToken.bodyHash(body))
        // The header's `kid` names the installation too, so the relay finds the key without decoding the claims twice.
        return try await keys.sign(claims, kid: JWKIdentifier(string: claims.iss.value))
    }
}
