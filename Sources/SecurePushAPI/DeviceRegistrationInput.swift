import Foundation
import HTTPTypes
import SecurePushCore

/// The body of `POST /v1/devices`: `platform`, `token` and the platform's options, all strings, exactly as
/// `docs/openapi.json` describes it. A browser's `PushSubscription.toJSON()` (`endpoint`, `keys`,
/// `expirationTime`) is accepted for Web Push in place of `token`, `p256dh` and `auth`.
///
/// `PUT /v1/devices/current/token` takes the same body for the device's own platform (`init(json:platform:)`):
/// `platform` may be left out, and without options the device keeps the ones it has (`optionsJSON` is `nil`).
struct DeviceRegistrationInput {
    var platform: String
    var token: String
    var optionsJSON: String?
    /// The device's sealing key (`sealing_key`, registration only; not for Web Push).
    var sealingKey: SealingPublicKey?

    /// A registration's body.
    init(json: Data) throws {
        try self.init(json: json, fixed: nil)
    }

    /// A token update's body for a device of `platform`.
    init(json: Data, platform: Platform) throws {
        try self.init(json: json, fixed: platform)
    }

    private init(json: Data, fixed: Platform?) throws {
        guard let object = (try? JSONSerialization.jsonObject(with: json)) as? [String: Any] else {
            throw APIError(.badRequest, code: .invalidJSON, message: "The body must be a JSON object.")
        }
        var fields = object
        let named = fields.removeValue(forKey: "platform")
        let platform: String
        if let fixed {
            guard named == nil || named as? String == fixed.rawValue else {
                throw Self.invalid("A device keeps its platform (\(fixed.rawValue)); register a new device for another one.")
            }
            platform = fixed.rawValue
        } else {
            guard let name = named as? String else {
                let names = Platform.allCases.map(\.rawValue).joined(separator: ", ")
                throw APIError.invalidDevice("\"platform\" is required: one of \(names).")
            }
            platform = name
        }
        if let value = fields.removeValue(forKey: SealingKeyInput.member) {
            guard fixed == nil else {
                throw Self.invalid("A sealing key is set with PUT /v1/devices/current/sealing-key, not with the push address.")
            }
            guard Platform(rawValue: platform)?.sealsItsOwnMessage != true else {
                throw Self.invalid("Web Push and UnifiedPush devices seal with their subscription's keys; give no \"sealing_key\".")
            }
            sealingKey = try SealingKeyInput.parse(value)
        }
        if Platform(rawValue: platform)?.sealsItsOwnMessage == true, let subscription = fields.removeValue(forKey: "subscription") {
            try Self.flatten(subscription: subscription, into: &fields)
        }
        guard let token = fields.removeValue(forKey: "token") as? String, !token.isEmpty else {
            throw Self.invalid("\"token\" is required (the push token, channel URI or endpoint).")
        }
        var options: [String: String] = [:]
        for (key, value) in fields {
            guard let string = value as? String else { throw Self.invalid("Platform option \"\(key)\" must be a string.") }
            options[key] = string
        }
        // PostgreSQL text cannot hold NUL: refuse it here with a precise error instead of failing in the database.
        for text in [platform, token] + options.keys + options.values where text.contains("\u{0}") {
            throw Self.invalid("The registration contains a NUL character.")
        }
        // Push URLs are printable ASCII without spaces (anything else would be percent-encoded by a client).
        if Platform(rawValue: platform)?.tokenIsURL == true, !token.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) {
            throw Self.invalid("The endpoint must be an https URL of printable ASCII characters.")
        }
        self.platform = platform
        self.token = token
        if fixed != nil && options.isEmpty {
            self.optionsJSON = nil
        } else {
            self.optionsJSON = String(decoding: try JSONSerialization.data(withJSONObject: options, options: [.sortedKeys]), as: UTF8.self)
        }
    }

    /// `{"endpoint", "keys": {"p256dh", "auth"}, "expirationTime"?}` becomes `token`, `p256dh`, `auth`;
    /// anything else in it, or those fields given twice, is refused.
    static func flatten(subscription value: Any, into fields: inout [String: Any]) throws {
        guard var subscription = value as? [String: Any] else { throw invalid("\"subscription\" must be a PushSubscription object.") }
        for key in ["token", "p256dh", "auth"] where fields[key] != nil {
            throw invalid("Give either \"subscription\" or \"\(key)\", not both.")
        }
        if let expiration = subscription.removeValue(forKey: "expirationTime"), !(expiration is NSNull) {
            // Re-read strictly: JSONSerialization hands back booleans as numbers, JSONDecoder does not.
            let number = (try? JSONSerialization.data(withJSONObject: [expiration])).flatMap { try? JSONDecoder().decode([Double].self, from: $0) }
            guard number != nil else { throw invalid("\"subscription.expirationTime\" must be a number or null.") }
        }
        guard let endpoint = subscription.removeValue(forKey: "endpoint") as? String,
            var keys = subscription.removeValue(forKey: "keys") as? [String: Any],
            let p256dh = keys.removeValue(forKey: "p256dh") as? String, let auth = keys.removeValue(forKey: "auth") as? String
        else {
            throw invalid("\"subscription\" needs \"endpoint\" and \"keys\" with \"p256dh\" and \"auth\" strings.")
        }
        guard subscription.isEmpty, keys.isEmpty else {
            let extra = (Array(subscription.keys) + keys.keys.map { "keys.\($0)" }).sorted().joined(separator: ", ")
            throw invalid("Unknown subscription field(s): \(extra).")
        }
        fields["token"] = endpoint
        fields["p256dh"] = p256dh
        fields["auth"] = auth
    }

    static func invalid(_ message: String) -> APIError {
        APIError.invalidDevice(message)
    }
}
