import Foundation
import NIOConcurrencyHelpers
import SecurePushCore
import SecurePushFakes
import _CryptoExtras

/// The fake push service of every real platform on loopback, and the settings that point SecurePush's providers
/// at them: what the tests that must hold for each platform start (no payload byte in any envelope, every
/// provider configured from settings alone, sealed previews, traces).
///
/// `device(_:)` and `accepted(_:)` switch over `Platform`, so a platform added to Core does not compile until it
/// has a fake here, and the tests that iterate `realPlatforms` then cover it without an edit of their own. Web
/// Push and UnifiedPush share one fake Web Push service (one VAPID key, one CA), told apart by endpoint.
public final class FakePushServices: Sendable {
    /// APNs.
    public let apns: FakeAPNsServer
    /// FCM HTTP v1 with its OAuth token endpoint.
    public let fcm: FakeFCMServer
    /// Web Push services, for Web Push and UnifiedPush devices.
    public let webPush: FakeWebPushServer
    /// WNS with its OAuth token endpoint.
    public let wns: FakeWNSServer
    /// The `SECUREPUSH_*` settings of every real platform (add `SECUREPUSH_PROVIDERS`).
    public let settings: [String: String]
    /// The endpoints handed out per platform that uses the Web Push fake.
    private let endpoints = NIOLockedValueBox<[Platform: Set<String>]>([:])

    /// Every platform but `simulated`, in `Platform`'s order.
    public static let realPlatforms = Platform.allCases.filter { $0 != .simulated }

    /// `realPlatforms` as `SECUREPUSH_PROVIDERS` lists them.
    public static var providersSetting: String { realPlatforms.map(\.rawValue).joined(separator: ",") }

    private init(apns: FakeAPNsServer, fcm: FakeFCMServer, webPush: FakeWebPushServer, wns: FakeWNSServer, settings: [String: String]) {
        (self.apns, self.fcm, self.webPush, self.wns, self.settings) = (apns, fcm, webPush, wns, settings)
    }

    /// Starts every fake, runs `body`, and shuts them down.
    public static func with<T>(_ body: (FakePushServices) async throws -> T) async throws -> T {
        let apnsKey = try FakeCredentials.apnsKey()
        let apns = try await FakeAPNsServer.start(keys: [apnsKey.signingKey()])
        let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let fcm = try await FakeFCMServer.start(
            projectID: "securepush-test", clientEmail: "pusher@securepush-test.iam.gserviceaccount.com", publicKey: rsa.publicKey)
        let webPush = try await FakeWebPushServer.start()
        let wns = try await FakeWNSServer.start(clientID: "ms-app://s-1-15-2-7", clientSecret: "wns-secret-\(UUID())")
        return try await withShutdown(of: apns) {
            try await withShutdown(of: fcm) {
                try await withShutdown(of: webPush) {
                    try await withShutdown(of: wns) {
                        var settings = FakeCredentials.environment(apns: apns, key: apnsKey)
                        settings.merge(
                            FakeCredentials.environment(fcm: fcm, account: try FakeCredentials.serviceAccount(key: rsa, tokenURI: fcm.tokenURI))
                        ) { $1 }
                        settings.merge(FakeCredentials.environment(webPush: webPush, vapidKeyFile: try FakeCredentials.vapidKey().path)) { $1 }
                        settings.merge(FakeCredentials.environment(wns: wns)) { $1 }
                        settings["SECUREPUSH_UNIFIEDPUSH_ALLOWED_HOSTS"] = "127.0.0.1,localhost"
                        settings["SECUREPUSH_PUSH_ALLOWED_PRIVATE_NETWORKS"] = FakeCredentials.loopbackNetworks
                        return try await body(FakePushServices(apns: apns, fcm: fcm, webPush: webPush, wns: wns, settings: settings))
                    }
                }
            }
        }
    }

    /// A device a fake accepts: its token and registration options.
    public struct Device: Sendable {
        /// The push token (an endpoint or channel URI for the platforms whose token is a URL).
        public var token: String
        /// The registration options (a Web Push subscription's keys).
        public var options: [String: String] = [:]
        /// `options` as the JSON object `securepush.devices.options` holds.
        public var optionsJSON: String {
            get throws { String(decoding: try JSONSerialization.data(withJSONObject: options, options: .sortedKeys), as: UTF8.self) }
        }
    }

    /// A new device of `platform` that its fake accepts (`nil` for `simulated`, which has no fake).
    public func device(_ platform: Platform) -> Device? {
        switch platform {
        case .apns:
            return Device(token: hexToken())
        case .fcm:
            return Device(token: "fcm-token-" + UUID().uuidString.lowercased())
        case .webpush, .unifiedpush:
            let subscription = webPush.subscribe()
            endpoints.withLockedValue { _ = $0[platform, default: []].insert(subscription.endpoint) }
            return Device(token: subscription.endpoint, options: ["p256dh": subscription.p256dh, "auth": subscription.auth])
        case .wns:
            return Device(token: wns.makeChannelURI())
        case .simulated:
            return nil
        }
    }

    /// Every push the fake of `platform` accepted, in order, each as the text that crossed the wire: the
    /// request's path, its headers and its body (decrypted for Web Push and UnifiedPush).
    public func accepted(_ platform: Platform) -> [String] {
        func text(_ request: FakeRequest, body: Data? = nil) -> String {
            ([request.path] + request.headers.map { "\($0.name): \($0.value)" }).joined(separator: "\n") + "\n"
                + String(decoding: body ?? request.body, as: UTF8.self)
        }
        switch platform {
        case .apns:
            return apns.delivered.map { text($0) }
        case .fcm:
            return fcm.delivered.map { text($0) }
        case .webpush, .unifiedpush:
            let mine = endpoints.withLockedValue { $0[platform, default: []] }
            return webPush.deliveries.filter { delivery in mine.contains { $0.hasSuffix(delivery.request.path) } }
                .map { text($0.request, body: $0.plaintext) }
        case .wns:
            return wns.delivered.map { text($0) }
        case .simulated:
            return []
        }
    }
}
