import Crypto
import Foundation
import PostgresNIO
import SecurePushCore
import SecurePushFakes
import SecurePushTestSupport
import Testing
import _CryptoExtras

/// Every row of the push-protocols reference's error tables, end to end: a notification enqueued with SQL,
/// a dispatcher with the real provider, a fake server speaking the platform's protocol, and the outcome in
/// the database (sent, device deactivated, retried with the right delay, failed permanently).
@Suite("Real platforms through the dispatcher")
struct PlatformDispatchTests {
    @Test("APNs: every reason of the error table")
    func apnsErrorTable() async throws {
        let rows: [(Int, String, String?, Expected)] = [
            (200, "", nil, .sent),
            (400, "BadDeviceToken", nil, .tokenInvalid), (400, "DeviceTokenNotForTopic", nil, .tokenInvalid),
            (400, "BadCollapseId", nil, .failed), (400, "BadExpirationDate", nil, .failed), (400, "BadMessageId", nil, .failed),
            (400, "BadPriority", nil, .failed), (400, "BadTopic", nil, .failed), (400, "DuplicateHeaders", nil, .failed),
            (400, "InvalidPushType", nil, .failed), (400, "MissingDeviceToken", nil, .failed), (400, "MissingTopic", nil, .failed),
            (400, "PayloadEmpty", nil, .failed), (400, "TopicDisallowed", nil, .failed),
            (400, "IdleTimeout", nil, .retry(atLeast: 54, atMost: 66)),
            (403, "BadCertificate", nil, .failed), (403, "BadCertificateEnvironment", nil, .failed), (403, "Forbidden", nil, .failed),
            (403, "InvalidProviderToken", nil, .failed), (403, "MissingProviderToken", nil, .failed),
            (404, "BadPath", nil, .failed), (405, "MethodNotAllowed", nil, .failed),
            (410, "Unregistered", nil, .tokenInvalid), (410, "ExpiredToken", nil, .tokenInvalid),
            (413, "PayloadTooLarge", nil, .failed),
            (429, "TooManyRequests", nil, .retry(atLeast: 54, atMost: 66)),
            (429, "TooManyRequests", "300", .retry(atLeast: 300, atMost: 301)),
            (429, "TooManyProviderTokenUpdates", nil, .retry(atLeast: 54, atMost: 66)),
            (500, "InternalServerError", nil, .retry(atLeast: 54, atMost: 66)),
            (503, "ServiceUnavailable", nil, .retry(atLeast: 54, atMost: 66)), (503, "Shutdown", nil, .retry(atLeast: 54, atMost: 66)),
        ]
        try await TestDatabase.with { db in
            let key = try FakeCredentials.apnsKey()
            let fake = try await FakeAPNsServer.start(keys: [key.signingKey()])
            try await withShutdown(of: fake) {
                var devices: [(device: UUID, expected: Expected, label: String)] = []
                for (status, reason, retryAfter, expected) in rows {
                    let token = hexToken()
                    if status != 200 { fake.script(token: token, .reject(status: status, reason: reason, retryAfter: retryAfter)) }
                    let user = "apns-\(devices.count)"
                    let device = try await db.insertDevice(user: user, platform: "apns", token: token, options: #"{"environment":"production"}"#)
                    _ = try await db.enqueue(user: user, payload: #"{"secret":"APNS-PAYLOAD"}"#)
                    devices.append((device, expected, "\(status) \(reason)\(retryAfter.map { " Retry-After \($0)" } ?? "")"))
                }
                let settings = FakeCredentials.environment(apns: fake, key: key)
                let rowsToCheck = devices
                try await withPlatformDispatcher(db, platforms: "apns", settings: settings) { _ in
                    try await expectOutcomes(db, rowsToCheck)
                }
                #expect(fake.distinctJWTs == 1, "one provider token for the whole run")
                for request in fake.requests {
                    #expect(!String(decoding: request.body, as: UTF8.self).contains("APNS-PAYLOAD"))
                }
            }
        }
    }

    @Test("APNs: ExpiredProviderToken renews the JWT and the push goes through")
    func apnsExpiredProviderToken() async throws {
        try await TestDatabase.with { db in
            let key = try FakeCredentials.apnsKey()
            let fake = try await FakeAPNsServer.start(keys: [key.signingKey()])
            try await withShutdown(of: fake) {
                let token = hexToken()
                fake.script(token: token, .expireProviderTokenOnce)
                let device = try await db.insertDevice(user: "renew", platform: "apns", token: token)
                _ = try await db.enqueue(user: "renew", payload: "{}")
                let settings = FakeCredentials.environment(apns: fake, key: key)
                try await withPlatformDispatcher(db, platforms: "apns", settings: settings) { _ in
                    try await expectOutcomes(db, [(device, .sent, "ExpiredProviderToken then 200")])
                }
                #expect(fake.distinctJWTs == 2)
            }
        }
    }

    @Test("FCM: every errorCode of the error table")
    func fcmErrorTable() async throws {
        let rows: [(FakeFCMServer.Behavior?, Expected, String)] = [
            (nil, .sent, "200"),
            (.reject(status: 404, errorCode: "UNREGISTERED", message: "Requested entity was not found."), .tokenInvalid, "UNREGISTERED"),
            (
                .reject(status: 400, errorCode: "INVALID_ARGUMENT", message: "The registration token is not a valid FCM registration token"),
                .tokenInvalid, "INVALID_ARGUMENT (token)"
            ),
            (.reject(status: 400, errorCode: "INVALID_ARGUMENT", message: "Invalid value at 'message.data'"), .failed, "INVALID_ARGUMENT (other)"),
            (.reject(status: 403, errorCode: "SENDER_ID_MISMATCH", message: "SenderId mismatch"), .tokenInvalid, "SENDER_ID_MISMATCH"),
            (.reject(status: 429, errorCode: "QUOTA_EXCEEDED", retryAfter: "90"), .retry(atLeast: 90, atMost: 91), "QUOTA_EXCEEDED Retry-After 90"),
            (.reject(status: 429, errorCode: "QUOTA_EXCEEDED"), .retry(atLeast: 60, atMost: 67), "QUOTA_EXCEEDED"),
            (.reject(status: 503, errorCode: "UNAVAILABLE", retryAfter: "120"), .retry(atLeast: 120, atMost: 121), "UNAVAILABLE Retry-After 120"),
            (.reject(status: 500, errorCode: "INTERNAL"), .retry(atLeast: 54, atMost: 66), "INTERNAL"),
            (.reject(status: 401, errorCode: "THIRD_PARTY_AUTH_ERROR"), .failed, "THIRD_PARTY_AUTH_ERROR"),
        ]
        try await TestDatabase.with { db in
            let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let fake = try await FakeFCMServer.start(
                projectID: "securepush-test", clientEmail: "pusher@securepush-test.iam.gserviceaccount.com", publicKey: rsa.publicKey)
            try await withShutdown(of: fake) {
                let account = try FakeCredentials.serviceAccount(key: rsa, tokenURI: fake.tokenURI)
                var devices: [(device: UUID, expected: Expected, label: String)] = []
                for (behavior, expected, label) in rows {
                    let token = "fcm-token-" + UUID().uuidString.lowercased()
                    if let behavior { fake.script(token: token, behavior) }
                    let user = "fcm-\(devices.count)"
                    let device = try await db.insertDevice(user: user, platform: "fcm", token: token)
                    _ = try await db.enqueue(user: user, payload: #"{"secret":"FCM-PAYLOAD"}"#)
                    devices.append((device, expected, label))
                }
                let rowsToCheck = devices
                try await withPlatformDispatcher(db, platforms: "fcm", settings: FakeCredentials.environment(fcm: fake, account: account)) { _ in
                    try await expectOutcomes(db, rowsToCheck)
                }
                #expect(fake.issuedAccessTokens == 1, "one access token shared by every send")
                for body in fake.deliveredBodies {
                    #expect(!String(decoding: body, as: UTF8.self).contains("FCM-PAYLOAD"))
                }
            }
        }
    }

    @Test("Web Push: every status of the table; the accepted body decrypts to the declarative message with the id")
    func webPushTable() async throws {
        let rows: [(FakeWebPushServer.Behavior?, Expected, String)] = [
            (nil, .sent, "201"),
            (.reject(status: 404), .tokenInvalid, "404"), (.reject(status: 410), .tokenInvalid, "410"),
            (.reject(status: 413), .failed, "413"),
            (.reject(status: 429, retryAfter: "100"), .retry(atLeast: 100, atMost: 101), "429 Retry-After 100"),
            (.reject(status: 500), .retry(atLeast: 54, atMost: 66), "500"), (.reject(status: 503), .retry(atLeast: 54, atMost: 66), "503"),
            (.redirect(to: "https://127.0.0.1:1/elsewhere"), .failed, "redirect not followed"),
        ]
        try await TestDatabase.with { db in
            let fake = try await FakeWebPushServer.start()
            try await withShutdown(of: fake) {
                let vapid = try FakeCredentials.vapidKey()
                var devices: [(device: UUID, expected: Expected, label: String)] = []
                var acceptedID: UUID?
                for (behavior, expected, label) in rows {
                    let subscription = fake.subscribe()
                    if let behavior { fake.script(subscription, behavior) }
                    let user = "webpush-\(devices.count)"
                    let options = #"{"p256dh":"\#(subscription.p256dh)","auth":"\#(subscription.auth)"}"#
                    let device = try await db.insertDevice(user: user, platform: "webpush", token: subscription.endpoint, options: options)
                    let id = try await db.enqueue(user: user, payload: #"{"secret":"WEBPUSH-PAYLOAD"}"#)
                    if behavior == nil { acceptedID = id }
                    devices.append((device, expected, label))
                }
                let rowsToCheck = devices
                try await withPlatformDispatcher(
                    db, platforms: "webpush", settings: FakeCredentials.environment(webPush: fake, vapidKeyFile: vapid.path)
                ) {
                    _ in
                    try await expectOutcomes(db, rowsToCheck)
                }
                let delivered = try #require(fake.deliveries.first)
                #expect(fake.deliveries.count == 1)
                let message = try #require(try JSONSerialization.jsonObject(with: delivered.plaintext) as? [String: Any])
                let notification = try #require(message["notification"] as? [String: Any])
                #expect(notification["data"] as? [String: String] == ["secureId": acceptedID!.uuidString.lowercased(), "urgency": "active"])
            }
        }
    }

    @Test("WNS: every status of the table; the raw body is the id")
    func wnsTable() async throws {
        let rows: [(FakeWNSServer.Behavior?, Expected, String)] = [
            (nil, .sent, "200"),
            (.reject(status: 404), .tokenInvalid, "404"), (.reject(status: 410), .tokenInvalid, "410"),
            (.reject(status: 403), .failed, "403"), (.reject(status: 413), .failed, "413"),
            (.reject(status: 406), .retry(atLeast: 54, atMost: 66), "406 throttled"),
            (.reject(status: 500), .retry(atLeast: 54, atMost: 66), "500"), (.reject(status: 503), .retry(atLeast: 54, atMost: 66), "503"),
        ]
        try await TestDatabase.with { db in
            let fake = try await FakeWNSServer.start(clientID: "ms-app://s-1-15-2-test", clientSecret: "wns-secret-\(UUID())")
            try await withShutdown(of: fake) {
                var devices: [(device: UUID, expected: Expected, label: String)] = []
                var acceptedID: UUID?
                for (behavior, expected, label) in rows {
                    let channel = fake.makeChannelURI()
                    if let behavior { fake.script(channel: channel, behavior) }
                    let user = "wns-\(devices.count)"
                    let device = try await db.insertDevice(user: user, platform: "wns", token: channel)
                    let id = try await db.enqueue(user: user, payload: #"{"secret":"WNS-PAYLOAD"}"#)
                    if behavior == nil { acceptedID = id }
                    devices.append((device, expected, label))
                }
                let rowsToCheck = devices
                try await withPlatformDispatcher(db, platforms: "wns", settings: FakeCredentials.environment(wns: fake)) { _ in
                    try await expectOutcomes(db, rowsToCheck)
                }
                let delivered = try #require(fake.delivered.first)
                #expect(String(decoding: delivered.body, as: UTF8.self) == acceptedID?.uuidString.lowercased())
                #expect(fake.issuedAccessTokens == 1)
            }
        }
    }

    @Test("a platform without credentials is disabled: its deliveries wait, visible per platform")
    func unconfiguredPlatformWaits() async throws {
        try await TestDatabase.with { db in
            let device = try await db.insertDevice(user: "waits", platform: "fcm", token: "fcm-token-waiting-0123456789")
            try await db.insertDevice(user: "waits", token: "sim-1")
            _ = try await db.enqueue(user: "waits", payload: "{}")
            let harness = try DispatcherHarness(database: db)
            try await db.eventually("the simulated push") { harness.pushes.count == 1 }
            await harness.stop()
            let pending: Int64 = try await db.scalar(
                "SELECT count(*)::bigint FROM securepush.deliveries WHERE device_id = \(device) AND state = 'pending' AND attempts = 0")
            #expect(pending == 1)
        }
    }
}
