import Crypto
import Foundation
import SecurePushCore

/// An installation's key: a P-256 private key the relay's operator prints once (`securepush relay installation
/// add`); the relay keeps only its public half, so neither a dump of the relay's database nor its operator
/// afterwards can sign as the installation. Text form: `securepush-relay-key-1:<base64url of the 32-byte scalar>`.
public struct InstallationKey: Sendable {
    /// The private key.
    public let privateKey: P256.Signing.PrivateKey

    static let prefix = "securepush-relay-key-1:"

    /// A new random key.
    public init() {
        self.privateKey = P256.Signing.PrivateKey()
    }

    /// Parses the text form (surrounding white space ignored).
    public init(text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix(Self.prefix), let raw = Data(base64URLEncoded: String(trimmed.dropFirst(Self.prefix.count))), raw.count == 32,
            let key = try? P256.Signing.PrivateKey(rawRepresentation: raw)
        else {
            throw RelayWireError("not a relay installation key (securepush-relay-key-1:<43 base64url characters>)")
        }
        self.privateKey = key
    }

    /// The text form, printed once.
    public var text: String { Self.prefix + privateKey.rawRepresentation.base64URLEncodedString }

    /// The public half the relay stores (X9.63, 65 bytes).
    public var publicKey: Data { privateKey.publicKey.x963Representation }
}
