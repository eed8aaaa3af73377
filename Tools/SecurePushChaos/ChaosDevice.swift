import Crypto
import Foundation
import SecurePushFakes

/// A device registered through the API, and how the fakes recognise pushes to it.
struct ChaosDevice: Sendable {
    /// The owner.
    var user: String
    var platform: ChaosPlatform
    /// What the fake sees: the APNs token, the FCM registration token, the WNS channel's path and query,
    /// the Web Push endpoint's path.
    var key: String
    /// `<device_id>.<device_secret>`, for the read API.
    var credential: String
    /// Web Push: the subscription's private key, to read what the fake accepted.
    var decryptor: WebPushDecryptor?

    /// A new device of `platform` for `user` and its registration body (not yet registered).
    static func make(user: String, platform: ChaosPlatform, fakes: ProviderFakes) -> (ChaosDevice, [String: any Sendable]) {
        switch platform {
        case .apns:
            let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
            return (
                ChaosDevice(user: user, platform: platform, key: token, credential: ""),
                ["platform": "apns", "token": token, "environment": "production"]
            )
        case .fcm:
            let token = "chaos-fcm:" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
            return (ChaosDevice(user: user, platform: platform, key: token, credential: ""), ["platform": "fcm", "token": token])
        case .wns:
            let uri = fakes.wns.makeChannelURI()
            let components = URLComponents(string: uri)
            let key = (components?.percentEncodedPath ?? "") + (components?.percentEncodedQuery.map { "?" + $0 } ?? "")
            return (ChaosDevice(user: user, platform: platform, key: key, credential: ""), ["platform": "wns", "token": uri])
        case .webpush:
            let subscription = fakes.webPush.subscribe()
            let key = URL(string: subscription.endpoint)?.path ?? subscription.endpoint
            return (
                ChaosDevice(user: user, platform: platform, key: key, credential: "", decryptor: subscription.decryptor),
                [
                    "platform": "webpush",
                    "subscription": [
                        "endpoint": subscription.endpoint, "keys": ["p256dh": subscription.p256dh, "auth": subscription.auth],
                    ] as [String: any Sendable],
                ]
            )
        }
    }
}

/// HS256 user tokens, as an app's identity provider would sign them.
struct UserTokens: Sendable {
    let secret: String

    /// A token for `user`, valid for two hours.
    func token(for user: String) -> String {
        let header = Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8).fakeBase64URL
        let now = Int(Date().timeIntervalSince1970)
        let claims = (try? JSONSerialization.data(withJSONObject: ["sub": user, "iat": now, "exp": now + 7200])) ?? Data()
        let input = header + "." + claims.fakeBase64URL
        let signature = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return input + "." + Data(signature).fakeBase64URL
    }
}
