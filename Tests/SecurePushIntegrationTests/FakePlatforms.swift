import Crypto
import Foundation
import SecurePushFakes
import SecurePushTestSupport
import _CryptoExtras

/// The four fake push platforms (APNs, FCM, Web Push, WNS) on loopback, and the settings that point
/// `securepush serve`'s providers at them.
struct FakePlatforms {
    var apns: FakeAPNsServer
    var fcm: FakeFCMServer
    var webPush: FakeWebPushServer
    var wns: FakeWNSServer
    /// The environment for `withPlatformDispatcher`.
    var settings: [String: String]

    /// Starts the four fakes, runs `body`, and shuts them down.
    static func with(_ body: (FakePlatforms) async throws -> Void) async throws {
        let apnsKey = try FakeCredentials.apnsKey()
        let apns = try await FakeAPNsServer.start(keys: [apnsKey.signingKey()])
        let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let fcm = try await FakeFCMServer.start(
            projectID: "securepush-test", clientEmail: "pusher@securepush-test.iam.gserviceaccount.com", publicKey: rsa.publicKey)
        let webPush = try await FakeWebPushServer.start()
        let wns = try await FakeWNSServer.start(clientID: "ms-app://s-1-15-2-7", clientSecret: "wns-secret-\(UUID())")
        try await withShutdown(of: apns) {
            try await withShutdown(of: fcm) {
                try await withShutdown(of: webPush) {
                    try await withShutdown(of: wns) {
                        var settings = FakeCredentials.environment(apns: apns, key: apnsKey)
                        settings.merge(
                            FakeCredentials.environment(fcm: fcm, account: try FakeCredentials.serviceAccount(key: rsa, tokenURI: fcm.tokenURI))
                        ) { $1 }
                        settings.merge(FakeCredentials.environment(webPush: webPush, vapidKeyFile: try FakeCredentials.vapidKey().path)) { $1 }
                        settings.merge(FakeCredentials.environment(wns: wns)) { $1 }
                        settings["SECUREPUSH_PUSH_ALLOWED_PRIVATE_NETWORKS"] = FakeCredentials.loopbackNetworks
                        try await body(FakePlatforms(apns: apns, fcm: fcm, webPush: webPush, wns: wns, settings: settings))
                    }
                }
            }
        }
    }
}
