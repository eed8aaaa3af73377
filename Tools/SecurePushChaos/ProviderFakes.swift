import Foundation
import SecurePushFakes
import _CryptoExtras

/// The push platforms a row's devices use.
enum ChaosPlatform: String, Sendable, CaseIterable {
    case apns
    case fcm
    case wns
    case webpush
}

/// The four fake push services in this process, and the credentials that let `securepush serve` reach
/// them. Each SecurePush process gets its own APNs key and VAPID key, so every APNs and Web Push request
/// names the process that sent it (the JWT's `kid`, the VAPID `k`).
final class ProviderFakes: Sendable {
    static let teamID = "CHAOSTEAM1"
    static let topic = "com.example.chaos"

    let apns: FakeAPNsServer
    let fcm: FakeFCMServer
    let wns: FakeWNSServer
    let webPush: FakeWebPushServer
    /// One APNs key per process, with its key id.
    let apnsKeys: [(keyID: String, key: FakeCredentials.APNsKey)]
    /// One VAPID key per process: the file and the public key as the `k` parameter carries it.
    let vapidKeys: [(path: String, publicKey: String)]
    let fcmAccount: FakeCredentials.ServiceAccount

    private init(
        apns: FakeAPNsServer, fcm: FakeFCMServer, wns: FakeWNSServer, webPush: FakeWebPushServer,
        apnsKeys: [(keyID: String, key: FakeCredentials.APNsKey)], vapidKeys: [(path: String, publicKey: String)],
        fcmAccount: FakeCredentials.ServiceAccount
    ) {
        self.apns = apns
        self.fcm = fcm
        self.wns = wns
        self.webPush = webPush
        self.apnsKeys = apnsKeys
        self.vapidKeys = vapidKeys
        self.fcmAccount = fcmAccount
    }

    /// Starts the fakes with credentials for `processes` SecurePush processes.
    static func start(processes: Int) async throws -> ProviderFakes {
        var apnsKeys: [(keyID: String, key: FakeCredentials.APNsKey)] = []
        var vapidKeys: [(path: String, publicKey: String)] = []
        for index in 0..<processes {
            apnsKeys.append((String(format: "CHAOSKEY%02d", index + 1), try FakeCredentials.apnsKey()))
            let vapid = try FakeCredentials.vapidKey()
            vapidKeys.append((vapid.path, vapid.key.publicKey.x963Representation.fakeBase64URL))
        }
        let apns = try await FakeAPNsServer.start(keys: apnsKeys.map { $0.key.signingKey(teamID: teamID, keyID: $0.keyID) })
        let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let clientEmail = "chaos@securepush-chaos.iam.gserviceaccount.com"
        let fcm = try await FakeFCMServer.start(projectID: "securepush-chaos", clientEmail: clientEmail, publicKey: rsa.publicKey)
        let account = try FakeCredentials.serviceAccount(key: rsa, tokenURI: fcm.tokenURI, projectID: "securepush-chaos", clientEmail: clientEmail)
        let wns = try await FakeWNSServer.start(clientID: "ms-app://s-1-15-2-chaos", clientSecret: "chaos-wns-secret")
        let webPush = try await FakeWebPushServer.start()
        return ProviderFakes(apns: apns, fcm: fcm, wns: wns, webPush: webPush, apnsKeys: apnsKeys, vapidKeys: vapidKeys, fcmAccount: account)
    }

    /// The settings pointing process number `index` at the fakes, for `platforms`.
    func environment(process index: Int, platforms: [ChaosPlatform]) -> [String: String] {
        var environment: [String: String] = ["SECUREPUSH_PROVIDERS": platforms.map(\.rawValue).joined(separator: ",")]
        // The API checks registrations against the allowlists whatever the process pushes to.
        environment.merge(FakeCredentials.environment(webPush: webPush, vapidKeyFile: vapidKeys[index].path)) { _, new in new }
        environment.merge(FakeCredentials.environment(wns: wns)) { _, new in new }
        environment["SECUREPUSH_WNS_ALLOWED_HOSTS"] = "127.0.0.1"
        if platforms.contains(.apns) {
            let (keyID, key) = apnsKeys[index]
            environment.merge(FakeCredentials.environment(apns: apns, key: key, teamID: Self.teamID, keyID: keyID, topic: Self.topic)) { _, new in new
            }
        }
        if platforms.contains(.fcm) {
            environment.merge(FakeCredentials.environment(fcm: fcm, account: fcmAccount)) { _, new in new }
        }
        return environment
    }

    /// The HTTP server behind a platform's fake.
    func server(_ platform: ChaosPlatform) -> FakeHTTPServer {
        switch platform {
        case .apns: apns.server
        case .fcm: fcm.server
        case .wns: wns.server
        case .webpush: webPush.server
        }
    }

    /// Which process sent a request, as far as the request says (APNs key id, VAPID key), or `nil`.
    func sender(of request: FakeRequest, platform: ChaosPlatform) -> Int? {
        switch platform {
        case .apns:
            guard let authorization = request.header("authorization"), authorization.lowercased().hasPrefix("bearer "),
                let jwt = CompactJWTReader(String(authorization.dropFirst(7))), let kid = jwt.header["kid"]
            else { return nil }
            return apnsKeys.firstIndex { $0.keyID == kid }
        case .webpush:
            guard let authorization = request.header("authorization") else { return nil }
            for part in authorization.split(separator: ",") {
                let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1).map(String.init)
                if pair.count == 2, pair[0] == "k" { return vapidKeys.firstIndex { $0.publicKey == pair[1] } }
            }
            return nil
        case .fcm, .wns:
            return nil
        }
    }

    /// Sets (or, with `nil`, clears) the answer every device of `platform` gets.
    func setStorm(_ kind: StormKind?, on platform: ChaosPlatform) {
        switch platform {
        case .apns:
            apns.setDefaultBehavior(
                kind.map {
                    switch $0 {
                    case .serverError: .reject(status: 503, reason: "ServiceUnavailable")
                    case .throttled(let seconds): .reject(status: 429, reason: "TooManyRequests", retryAfter: "\(seconds)")
                    case .stall: .stall
                    }
                })
        case .fcm:
            fcm.setDefaultBehavior(
                kind.map {
                    switch $0 {
                    case .serverError: .reject(status: 503, errorCode: "UNAVAILABLE", message: "The service is currently unavailable.")
                    case .throttled(let seconds):
                        .reject(status: 429, errorCode: "QUOTA_EXCEEDED", message: "Quota exceeded.", retryAfter: "\(seconds)")
                    case .stall: .stall
                    }
                })
        case .wns:
            wns.setDefaultBehavior(
                kind.map {
                    switch $0 {
                    case .serverError: .reject(status: 503)
                    case .throttled(let seconds): .reject(status: 429, retryAfter: "\(seconds)")
                    case .stall: .stall
                    }
                })
        case .webpush:
            webPush.setDefaultBehavior(
                kind.map {
                    switch $0 {
                    case .serverError: .reject(status: 503)
                    case .throttled(let seconds): .reject(status: 429, retryAfter: "\(seconds)")
                    case .stall: .stall
                    }
                })
        }
    }

    /// Stops the four servers.
    func shutdown() async {
        await apns.shutdown()
        await fcm.shutdown()
        await wns.shutdown()
        await webPush.shutdown()
    }
}

/// A provider storm's kind of failure.
enum StormKind: Sendable, CustomStringConvertible {
    /// 503 on every push.
    case serverError
    /// 429 with `Retry-After: seconds` on every push.
    case throttled(seconds: Int)
    /// Every push stalls until the client gives up.
    case stall

    var description: String {
        switch self {
        case .serverError: "5xx"
        case .throttled(let seconds): "429/Retry-After \(seconds)s"
        case .stall: "stall"
        }
    }
}
