import Crypto
import Foundation
import SecurePushCore
import _CryptoExtras

/// Signs compact JWS tokens (JWTs) the way APNs, Google OAuth and VAPID expect them.
///
/// Why not jwt-kit (already a dependency: the API verifies user tokens with it)? Checked against jwt-kit 5.8:
/// - Its only public signing path is `JWTKeyCollection.sign(_:kid:header:)`, an `async` method of an
///   actor; the signers behind it (`ECDSASigner`, `RSASigner`) are internal. `APNsTokenCache` and
///   `VAPIDTokenCache` sign synchronously inside a lock so concurrent sends share one token, and
///   cannot await in there.
/// - `JWTSerializer.makeHeader(from:key:)` always sets `typ: "JWT"` when the header has none, and it is
///   a protocol extension method, so a custom serializer cannot drop it. Apple documents the APNs
///   provider token header as exactly `{"alg": "ES256", "kid": <key id>}`, and
///   `CrossCheckTests.apnsJWTWithPyJWT` checks exactly those two keys with pyjwt.
/// Moving only the FCM grant (RS256) to jwt-kit would leave two signers for one job. What is left here
/// is small: JSON with sorted keys, base64url, and swift-crypto's signature (ES256 as raw r||s, RS256
/// as PKCS#1 v1.5), all verified by pyjwt in the cross-checks. `iat`/`exp` are integers.
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
