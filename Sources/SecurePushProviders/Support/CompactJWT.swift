import Crypto
import Foundation
import SecurePushCore
import _CryptoExtras

/// Signs compact JWS tokens (JWTs) the way APNs, Google OAuth and VAPID expect them.
///
/// Hand-rolled rather than generic so the exact header and claim layout is visible: APNs wants only
/// `alg` and `kid` in the header and `iat` as a number.
package enum CompactJWT {
    /// Signs with ES256 (P-256, raw r||s signature as RFC 7518 requires).
    package static func es256(header: [String: String], claims: [String: any Sendable], key: P256.Signing.PrivateKey) throws -> String {
        let input = try signingInput(header: header, claims: claims)
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + signature.rawRepresentation.base64URLEncodedString
    }

    /// Signs with RS256 (RSASSA-PKCS1-v1_5 with SHA-256).
    package static func rs256(header: [String: String], claims: [String: any Sendable], key: _RSA.Signing.PrivateKey) throws -> String {
        let input = try signingInput(header: header, claims: claims)
        let signature = try key.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + signature.rawRepresentation.base64URLEncodedString
    }

    static func signingInput(header: [String: String], claims: [String: any Sendable]) throws -> String {
        let headerJSON = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys, .withoutEscapingSlashes])
        let claimsJSON = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys, .withoutEscapingSlashes])
        return headerJSON.base64URLEncodedString + "." + claimsJSON.base64URLEncodedString
    }
}
