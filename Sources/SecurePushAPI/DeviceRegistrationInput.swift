import Foundation
import SecurePushCore

/// The body of `POST /v1/devices`: `platform`, `token` and the platform's options, all strings.
/// A browser's `PushSubscription.toJSON()` (`endpoint` + `keys`) is accepted for Web Push.
struct DeviceRegistrationInput {
    var platform: String
    var token: String
    var optionsJSON: String

    init(json: Data) throws {
        guard let object = (try? JSONSerialization.jsonObject(with: json)) as? [String: Any] else {
            throw APIError(.badRequest, code: "invalid_json", message: "The body must be a JSON object.")
        }
        var fields = object
        guard let platform = fields.removeValue(forKey: "platform") as? String else {
            let names = Platform.allCases.map(\.rawValue).joined(separator: ", ")
            throw APIError(.badRequest, code: "invalid_device", message: "\"platform\" is required: one of \(names).")
        }
        if platform == Platform.webpush.rawValue, let subscription = fields.removeValue(forKey: "subscription") as? [String: Any] {
            fields["token"] = subscription["endpoint"]
            if let keys = subscription["keys"] as? [String: Any] {
                fields["p256dh"] = keys["p256dh"]
                fields["auth"] = keys["auth"]
            }
        }
        guard let token = fields.removeValue(forKey: "token") as? String, !token.isEmpty else {
            throw APIError(.badRequest, code: "invalid_device", message: "\"token\" is required (the push token, channel URI or endpoint).")
        }
        var options: [String: String] = [:]
        for (key, value) in fields {
            guard let string = value as? String else {
                throw APIError(.badRequest, code: "invalid_device", message: "Platform option \"\(key)\" must be a string.")
            }
            options[key] = string
        }
        self.platform = platform
        self.token = token
        self.optionsJSON = String(decoding: try JSONSerialization.data(withJSONObject: options, options: [.sortedKeys]), as: UTF8.self)
    }
}
