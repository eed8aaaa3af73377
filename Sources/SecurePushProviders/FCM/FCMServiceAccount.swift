import Foundation
import _CryptoExtras

/// The fields of a Google service-account JSON key file that FCM needs.
public struct FCMServiceAccount: Sendable {
    /// `client_email`: the JWT issuer.
    public var clientEmail: String
    /// `project_id`: the Firebase project messages are sent for.
    public var projectID: String
    /// `token_uri`: the OAuth token endpoint (also the JWT audience).
    public var tokenURI: String
    /// `private_key_id`: sent as the JWT `kid` when present.
    public var privateKeyID: String?
    /// The RSA key from `private_key`.
    public var privateKey: _RSA.Signing.PrivateKey

    /// Creates an account from parsed fields.
    public init(clientEmail: String, projectID: String, tokenURI: String, privateKeyID: String?, privateKey: _RSA.Signing.PrivateKey) {
        self.clientEmail = clientEmail
        self.projectID = projectID
        self.tokenURI = tokenURI
        self.privateKeyID = privateKeyID
        self.privateKey = privateKey
    }

    /// Parses the key file's JSON. The error names the missing field, never a value.
    public init(json: Data) throws {
        guard let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any] else {
            throw FCMServiceAccountError("is not a JSON object")
        }
        func field(_ name: String) throws -> String {
            guard let value = object[name] as? String, !value.isEmpty else { throw FCMServiceAccountError("has no \(name)") }
            return value
        }
        let pem = try field("private_key")
        let key: _RSA.Signing.PrivateKey
        do {
            key = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw FCMServiceAccountError("has a private_key that is not an RSA PEM key")
        }
        self.init(
            clientEmail: try field("client_email"),
            projectID: try field("project_id"),
            tokenURI: (object["token_uri"] as? String) ?? "https://oauth2.googleapis.com/token",
            privateKeyID: object["private_key_id"] as? String,
            privateKey: key
        )
    }
}

/// A service-account key file that cannot be used.
public struct FCMServiceAccountError: Error, CustomStringConvertible, Sendable {
    /// What is wrong, e.g. "has no client_email".
    public var problem: String
    init(_ problem: String) { self.problem = problem }
    public var description: String { "FCM service account key \(problem)" }
}
