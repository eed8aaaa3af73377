import Crypto
import Foundation
import HTTPTypes
import SecurePushCore

/// A device's sealing key as the API receives it: `{"p256dh": "<base64url>", "auth": "<base64url>"}` (the
/// shape of a Web Push subscription's keys), in a registration's `sealing_key`, a rotation's `sealing_key` or
/// the body of `PUT /v1/devices/current/sealing-key`. The point must lie on P-256 and the auth secret be 16
/// bytes; anything else is `400 invalid_device`.
enum SealingKeyInput {
    /// The member of registration and rotation bodies that carries it.
    static let member = "sealing_key"

    /// The key in `value` (a decoded JSON object).
    static func parse(_ value: Any) throws -> SealingPublicKey {
        guard let object = value as? [String: Any], Set(object.keys) == ["p256dh", "auth"],
            let p256dh = (object["p256dh"] as? String).flatMap(Data.init(base64URLEncoded:)),
            let auth = (object["auth"] as? String).flatMap(Data.init(base64URLEncoded:))
        else {
            throw invalid("\"\(member)\" must be {\"p256dh\", \"auth\"}: base64url strings, nothing else.")
        }
        guard (try? P256.KeyAgreement.PublicKey(x963Representation: p256dh)) != nil, let key = SealingPublicKey(publicKey: p256dh, authSecret: auth)
        else {
            throw invalid("\"\(member)\" needs an uncompressed P-256 point (65 bytes) and a 16-byte auth secret.")
        }
        return key
    }

    /// The key in a JSON body that is the key object itself.
    static func parse(body: Data) throws -> SealingPublicKey {
        guard let object = try? JSONSerialization.jsonObject(with: body) else {
            throw APIError(.badRequest, code: .invalidJSON, message: "The body must be a JSON object: {\"p256dh\", \"auth\"}.")
        }
        return try parse(object)
    }

    /// A rotation's optional body: empty, `{}` or `{"sealing_key": {...}}`.
    static func parse(rotation body: Data) throws -> SealingPublicKey? {
        guard !body.isEmpty else { return nil }
        guard var object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else {
            throw APIError(.badRequest, code: .invalidJSON, message: "The body must be empty or a JSON object: {\"\(member)\"}.")
        }
        let value = object.removeValue(forKey: member)
        guard object.isEmpty else { throw invalid("A rotation's body has only \"\(member)\".") }
        return try value.map(parse)
    }

    static func invalid(_ message: String) -> APIError {
        APIError.invalidDevice(message)
    }
}
