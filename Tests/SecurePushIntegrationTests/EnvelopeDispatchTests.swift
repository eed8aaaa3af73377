import Crypto
import Foundation
import PostgresNIO
import SecurePushCore
import SecurePushDispatcher
import SecurePushFakes
import SecurePushProviders
import SecurePushStore
import SecurePushTestSupport
import Testing
import _CryptoExtras

/// The envelopes end to end: notifications enqueued with SQL, a dispatcher with every real provider, and
/// what each fake platform received (docs/envelopes.md).
@Suite("Envelopes through the dispatcher")
struct EnvelopeDispatchTests {
    @Test(
        "no payload byte in any platform's envelope, pushes and clears: every real platform (APNs alert and silent; Web Push and UnifiedPush decrypted) and simulated"
    )
    func idOnlyOnEveryPlatform() async throws {
        try await TestDatabase.with { db in
            try await FakePushServices.with { fakes in
                // One device per real platform (FakePushServices names them all), and a second APNs device with the
                // silent style: APNs has two envelopes.
                var devices: [Platform: Int] = [:]
                for platform in FakePushServices.realPlatforms {
                    let device = try #require(fakes.device(platform))
                    try await db.insertDevice(user: "ivy", platform: platform.rawValue, token: device.token, options: try device.optionsJSON)
                    devices[platform] = 1
                }
                let silent = try #require(fakes.device(.apns))
                try await db.insertDevice(user: "ivy", platform: "apns", token: silent.token, options: #"{"push_style":"silent"}"#)
                devices[.apns, default: 0] += 1
                try await db.insertDevice(user: "ivy", token: "ivy-simulated")
                var markers: [UUID: String] = [:]
                for _ in 0..<8 {
                    let marker = "PAYLOAD-MARKER-\(UUID().uuidString)"
                    let id = try await db.enqueue(user: "ivy", payload: #"{"secret":"\#(marker)","title":"Payment received"}"#)
                    markers[id] = marker
                }
                let ids = Set(markers.keys.map { $0.uuidString.lowercased() })
                let payloadMarkers = Array(markers.values)
                let expected = devices
                let pushes = 8 * (expected.values.reduce(0, +) + 1)
                try await withPlatformDispatcher(db, platforms: FakePushServices.providersSetting, settings: fakes.settings) { harness in
                    try await db.eventually("\(pushes) pushes", timeout: .seconds(30)) {
                        expected.allSatisfy { fakes.accepted($0.key).count == 8 * $0.value } && harness.pushes.count == 8
                    }
                    // Every byte each platform received: request line, headers, body (decrypted for Web Push).
                    var wire = FakePushServices.realPlatforms.flatMap { platform in fakes.accepted(platform).map { (platform.rawValue, $0) } }
                    let encoder = JSONEncoder()
                    wire += try harness.pushes.map { ("simulated", String(decoding: try encoder.encode($0), as: UTF8.self)) }
                    #expect(wire.count == pushes)
                    for (platform, text) in wire {
                        for marker in payloadMarkers { #expect(!text.contains(marker), "\(platform) carried a payload") }
                        #expect(!text.contains("Payment received"), "\(platform) carried a payload")
                        #expect(ids.contains { text.contains($0) }, "\(platform) carries the id")
                    }

                    // Read sync: the simulated device reads all eight; every other device gets one clear naming them.
                    // A clear names the notifications whose push was accepted: wait until every outcome is logged.
                    try await db.eventually(
                        "\(pushes) outcomes logged as sent", timeout: .seconds(30),
                        count: "SELECT count(*)::bigint FROM securepush.delivery_log WHERE outcome = 'sent'", is: Int64(pushes))
                    try await db.execute("UPDATE securepush.settings SET value = '0 seconds' WHERE key = 'read_sync_window'")
                    let reader: UUID = try await db.scalar("SELECT id FROM securepush.devices WHERE token = 'ivy-simulated'")
                    try await db.execute(
                        "INSERT INTO securepush.fetches (notification_id, device_id) SELECT id, \(reader) FROM securepush.notifications")
                    try await db.execute("UPDATE securepush.notifications SET read_at = now() WHERE user_id = 'ivy'")
                    try await db.eventually("a clear for each device", timeout: .seconds(30)) {
                        expected.allSatisfy { fakes.accepted($0.key).count == 9 * $0.value }
                    }
                    let clears = expected.flatMap { platform, count in fakes.accepted(platform).suffix(count).map { (platform.rawValue, $0) } }
                    for (platform, text) in clears {
                        for marker in payloadMarkers { #expect(!text.contains(marker), "\(platform) clear carried a payload") }
                        #expect(text.contains("secureClear") || text.contains("clear:"), "\(platform): \(text)")
                        #expect(ids.allSatisfy { text.contains($0) }, "\(platform) clear names every read notification")
                    }
                    #expect(harness.pushes.count == 8, "the reader gets no clear")
                }
                let types = fakes.apns.delivered.compactMap { $0.header("apns-push-type") }
                // 8 alerts and 8 silent pushes, then the 2 clears (background).
                #expect(types.filter { $0 == "alert" }.count == 8 && types.filter { $0 == "background" }.count == 10)
            }
        }
    }

    @Test("the badge is the recipient's unread count when the push is claimed: read, expired and other users' notifications do not count")
    func unreadBadge() async throws {
        try await TestDatabase.with { db in
            try await db.insertDevice(user: "bea", token: "bea-phone")
            try await db.insertDevice(user: "bea", token: "bea-watch", options: #"{"push_style":"silent"}"#)
            try await db.insertDevice(user: "cal", token: "cal-phone")
            for _ in 0..<4 { _ = try await db.enqueue(user: "bea", payload: "{}") }
            let read = try await db.enqueue(user: "bea", payload: "{}")
            try await db.client.query(
                "UPDATE securepush.notifications SET read_at = now() WHERE id = \(read)", logger: db.logger)
            _ = try await db.enqueue(user: "bea", payload: "{}", ttl: "1 millisecond")
            for _ in 0..<2 { _ = try await db.enqueue(user: "cal", payload: "{}") }
            try await db.eventually("the short notification expired") {
                try await db.scalar("SELECT count(*) = 1 FROM securepush.notifications WHERE expires_at <= now()")
            }
            // Fanned out before the dispatcher starts: the badge counts fanned-out notifications (docs/clients.md),
            // and the harness's two lanes fanning out the queue in parts would make the count depend on timing.
            _ = try await db.fanOut()
            let harness = try DispatcherHarness(database: db)
            // bea: 5 live notifications to 2 devices (the expired one is not pushed); cal: 2.
            try await db.eventually("12 pushes") { harness.pushes.count == 12 }
            await harness.stop()
            for push in harness.pushes {
                let body = try #require(try JSONSerialization.jsonObject(with: Data(push.body.utf8)) as? [String: Any])
                let badge = (body["aps"] as? [String: Any])?["badge"] as? Int
                switch push.token {
                case "bea-phone": #expect(badge == 4, "bea has 4 unread, unexpired notifications")
                case "bea-watch": #expect(badge == nil, "a silent push has no badge")
                default: #expect(badge == 2, "cal has 2")
                }
            }
        }
    }

    @Test("the badge stops counting at 999, so a user's huge backlog costs each claim no more")
    func badgeCap() async throws {
        try await TestDatabase.with { db in
            // 1,200 unread notifications from before the device existed (so without deliveries), then one pushed.
            try await db.execute("INSERT INTO securepush.notifications (user_id, payload) SELECT 'flo', '{}' FROM generate_series(1, 1200)")
            try await db.fanOut()
            try await db.insertDevice(user: "flo", token: "flo-phone")
            _ = try await db.enqueue(user: "flo", payload: "{}")
            let counting = PostgresDeliveryQueue(client: db.client, logger: db.logger, unreadBadge: true)
            let batch = try await counting.claim(limit: 10, platforms: [.simulated], lease: .seconds(30), worker: UUID())
            #expect(batch.deliveries.map(\.push.badge) == [PostgresDeliveryQueue.badgeLimit])

            _ = try await db.enqueue(user: "flo", payload: "{}")
            let notCounting = PostgresDeliveryQueue(client: db.client, logger: db.logger)
            let plain = try await notCounting.claim(limit: 10, platforms: [.simulated], lease: .seconds(30), worker: UUID())
            #expect(plain.deliveries.count == 1)
            #expect(plain.deliveries.allSatisfy { $0.push.badge == nil })
        }
    }

    @Test("SECUREPUSH_BADGE=off: no badge, and the claim does not count")
    func badgeOff() async throws {
        try await TestDatabase.with { db in
            try await db.insertDevice(user: "dan", token: "dan-phone")
            for _ in 0..<3 { _ = try await db.enqueue(user: "dan", payload: "{}") }
            var configuration = DispatcherConfiguration.testing
            configuration.unreadBadge = false
            let harness = try DispatcherHarness(database: db, configuration: configuration)
            try await db.eventually("3 pushes") { harness.pushes.count == 3 }
            await harness.stop()
            for push in harness.pushes {
                #expect(push.headers.contains(WireHeader("apns-push-type", "alert")))
                #expect(!push.body.contains("badge"))
            }
        }
    }

    @Test("FCM projects and WNS apps are chosen per device through the dispatcher, from SECUREPUSH_* settings")
    func severalApps() async throws {
        try await TestDatabase.with { db in
            // One key for both service accounts (RSA key generation is slow); the fake tells them apart by email.
            let bankKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let proKey = bankKey
            let fcm = try await FakeFCMServer.start(accounts: [
                .init(projectID: "bank-app", clientEmail: "pusher@bank-app.iam.gserviceaccount.com", publicKey: bankKey.publicKey),
                .init(projectID: "bank-pro", clientEmail: "pusher@bank-pro.iam.gserviceaccount.com", publicKey: proKey.publicKey),
            ])
            let wns = try await FakeWNSServer.start(clients: [("ms-app://s-1-15-2-bank", "bank-secret"), ("ms-app://s-1-15-2-pro", "pro-secret")])
            try await withShutdown(of: fcm) {
                try await withShutdown(of: wns) {
                    let bankAccount = try FakeCredentials.serviceAccount(
                        key: bankKey, tokenURI: fcm.tokenURI, projectID: "bank-app", clientEmail: "pusher@bank-app.iam.gserviceaccount.com")
                    let proAccount = try FakeCredentials.serviceAccount(
                        key: proKey, tokenURI: fcm.tokenURI, projectID: "bank-pro", clientEmail: "pusher@bank-pro.iam.gserviceaccount.com")
                    let (bankToken, proToken) = ("fcm-bank-" + UUID().uuidString.lowercased(), "fcm-pro-" + UUID().uuidString.lowercased())
                    fcm.bind(token: bankToken, toProject: "bank-app")
                    fcm.bind(token: proToken, toProject: "bank-pro")
                    let (bankChannel, proChannel) = (
                        wns.makeChannelURI(for: "ms-app://s-1-15-2-bank"), wns.makeChannelURI(for: "ms-app://s-1-15-2-pro")
                    )
                    let devices = [
                        try await db.insertDevice(user: "eve", platform: "fcm", token: bankToken),
                        try await db.insertDevice(user: "eve", platform: "fcm", token: proToken, options: #"{"project":"bank-pro"}"#),
                        try await db.insertDevice(user: "eve", platform: "wns", token: bankChannel),
                        try await db.insertDevice(user: "eve", platform: "wns", token: proChannel, options: #"{"app":"Contoso.BankPro"}"#),
                    ]
                    _ = try await db.enqueue(user: "eve", payload: #"{"secret":"EVE"}"#)

                    var settings = FakeCredentials.environment(fcm: fcm, account: bankAccount)
                    settings["SECUREPUSH_FCM_SERVICE_ACCOUNT_FILES"] = proAccount.path
                    settings.merge(FakeCredentials.environment(wns: wns)) { $1 }
                    settings["SECUREPUSH_WNS_CLIENT_ID"] = "ms-app://s-1-15-2-bank"
                    settings["SECUREPUSH_WNS_CLIENT_SECRET"] = "bank-secret"
                    settings["SECUREPUSH_WNS_APPS"] =
                        "Contoso.BankPro:\(try FakeCredentials.wnsApp(clientID: "ms-app://s-1-15-2-pro", secret: "pro-secret"))"
                    try await withPlatformDispatcher(db, platforms: "fcm,wns", settings: settings) { _ in
                        try await expectOutcomes(db, devices.map { ($0, Expected.sent, "device \($0)") })
                    }
                    #expect(Set(fcm.delivered.map(\.path)) == ["/v1/projects/bank-app/messages:send", "/v1/projects/bank-pro/messages:send"])
                    #expect(fcm.issuedAccessTokens == 2)
                    #expect(wns.delivered.count == 2)
                    #expect(wns.issuedAccessTokens == 2)
                }
            }
        }
    }
}
