import Crypto
import Foundation
import _CryptoExtras

/// A compact JWS split into its parts, for the fakes to verify what providers sign.
public struct CompactJWTReader: Sendable {
    /// The decoded header.
    public let header: [String: String]
    /// The decoded claims (numbers as `Double`/`Int`, strings as `String`).
    public let claims: [String: any Sendable]
    /// `base64url(header) + "." + base64url(claims)`.
    public let signingInput: Data
    /// The raw signature bytes.
    public let signature: Data

    /// Parses `token`; `nil` when it is not a three-part JWS with JSON header and claims.
    public init?(_ token: String) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerData = Data(fakeBase64URL: String(parts[0])),
            let claimsData = Data(fakeBase64URL: String(parts[1])),
            let signature = Data(fakeBase64URL: String(parts[2])),
            let header = (try? JSONSerialization.jsonObject(with: headerData)) as? [String: Any],
            let claims = (try? JSONSerialization.jsonObject(with: claimsData)) as? [String: Any]
        else { return nil }
        self.header = header.compactMapValues { $0 as? String }
        self.claims = claims.compactMapValues { value -> (any Sendable)? in
            if let string = value as? String { return string }
            if let number = value as? NSNumber { return number.doubleValue }
            return nil
        }
        self.signingInput = Data((parts[0] + "." + parts[1]).utf8)
        self.signature = signature
    }

    /// A string claim.
    public func string(_ name: String) -> String? { claims[name] as? String }

    /// A numeric claim (strings are not numbers: APNs requires `iat` as a number).
    public func number(_ name: String) -> Double? { claims[name] as? Double }

    /// Whether the ES256 signature verifies with `key`.
    public func verifiesES256(with key: P256.Signing.PublicKey) -> Bool {
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
        return key.isValidSignature(signature, for: signingInput)
    }

    /// Whether the RS256 signature verifies with `key`.
    public func verifiesRS256(with key: _RSA.Signing.PublicKey) -> Bool {
        key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: signingInput, padding: .insecurePKCS1v1_5)
    }
}

extension Data {
    /// Decodes unpadded base64url.
    public init?(fakeBase64URL text: String) {
        var value = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        if value.count % 4 != 0 { value += String(repeating: "=", count: 4 - value.count % 4) }
        self.init(base64Encoded: value)
    }

    /// Encodes as unpadded base64url.
    public var fakeBase64URL: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(
            of: "=", with: "")
    }
}
