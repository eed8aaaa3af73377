import AsyncHTTPClient
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import PostgresNIO
import Prometheus
import SecurePushAPI
import SecurePushCore
import SecurePushDispatcher
import SecurePushServer
import SecurePushStore
import SecurePushTestSupport
import Synchronization
import Testing

/// The device id of a `<device_id>.<device_secret>` credential.
func deviceID(of credential: String) throws -> UUID {
    guard let id = UUID(uuidString: String(credential.prefix { $0 != "." })) else { throw TestFailure("not a device credential") }
    return id
}

@Suite("Fetch lifecycle")
struct FetchLifecycleTests {
    @Test("accepted_at is when the platform answered, not when the batch was written")
    func acceptedAtIsTheAnswer() async throws {
        try await TestDatabase.with { db in
            let fast = try await db.insertDevice(user: "ada", token: "ada-fast")
            let slow = try await db.insertDevice(user: "ada", token: "ada-slow")
            let fastAnswered = Atomic(false)
            // The slow device's push answers 500 ms after the fast one's; one lane claims both in one batch.
            var configuration = DispatcherConfiguration.testing
            configuration.lanes = 1
            let harness = try DispatcherHarness(database: db, configuration: configuration) { push in
                if push.target.token == "ada-fast" {
                    fastAnswered.store(true, ordering: .sequentiallyConsistent)
                } else {
                    while !fastAnswered.load(ordering: .sequentiallyConsistent) { try? await Task.sleep(for: .milliseconds(5)) }
                    try? await Task.sleep(for: .milliseconds(500))
                }
                return .sent(messageID: nil)
            }
            let id = try await db.enqueue(user: "ada", payload: "{}")
            try await db.eventually("both pushes written") {
                try await db.scalar("SELECT count(*)::bigint FROM securepush.delivery_log WHERE outcome = 'sent'") == Int64(2)
            }
            await harness.stop()
            let sameBatch: Bool = try await db.scalar(
                "SELECT count(DISTINCT finished_at) = 1 FROM securepush.delivery_log WHERE notification_id = \(id)")
            #expect(sameBatch, "both outcomes were written by one statement")
            let fastWait: Double = try await db.scalar(
                "SELECT extract(epoch FROM finished_at - accepted_at)::float8 FROM securepush.delivery_log WHERE device_id = \(fast)")
            #expect(fastWait >= 0.4, "the fast push was accepted well before its batch was written (\(fastWait) s)")
            let gap: Double = try await db.scalar(
                """
                SELECT extract(epoch FROM s.accepted_at - f.accepted_at)::float8
                FROM securepush.delivery_log s, securepush.delivery_log f WHERE s.device_id = \(slow) AND f.device_id = \(fast)
                """)
            #expect(gap >= 0.4, "the slow push was accepted about 500 ms after the fast one (\(gap) s)")
            let ordered: Bool = try await db.scalar(
                "SELECT bool_and(accepted_at BETWEEN created_at AND finished_at) FROM securepush.delivery_log WHERE notification_id = \(id)")
            #expect(ordered)
        }
    }

    @Test("timestamps per delivery, device and notification; the fetch ratio and latency after a mix of fetched and unfetched pushes")
    func lifecycleAndRatio() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let phone = try await registerDevice(client, api, user: "lia", token: "lia-phone")
            let tablet = try await registerDevice(client, api, user: "lia", token: "lia-tablet")
            let (phoneID, tabletID) = (try deviceID(of: phone), try deviceID(of: tablet))
            let harness = try DispatcherHarness(database: db)
            var ids: [UUID] = []
            for index in 0..<4 { ids.append(try await db.enqueue(user: "lia", payload: #"{"n":\#(index)}"#)) }
            try await db.eventually("8 pushes accepted") {
                try await db.scalar("SELECT count(*)::bigint FROM securepush.delivery_log WHERE outcome = 'sent'") == Int64(8)
            }
            await harness.stop()

            // The phone fetches three notifications through the three read routes; the tablet only the first,
            // after the phone.
            #expect(try await client.execute(uri: "/v1/notifications/\(ids[0])", method: .get, headers: .bearer(phone)).status == .ok)
            let batch = try await client.execute(
                uri: "/v1/notifications/fetch", method: .post, headers: .bearer(phone), body: ByteBuffer(string: #"{"ids":["\#(ids[1])"]}"#))
            #expect((batch.body.json["notifications"] as? [Any])?.count == 1)
            // Unread now: ids[3] and ids[2]. The tablet's plain listing (which marks nothing) gives the cursor past
            // ids[3]; the phone's listing with payloads from there takes ids[2].
            let first = try await client.execute(uri: "/v1/notifications?unread=true&limit=1", method: .get, headers: .bearer(tablet))
            let cursor = try #require(first.body.json["next_cursor"] as? String)
            let page = try await client.execute(
                uri: "/v1/notifications?unread=true&limit=1&include=payload&cursor=\(cursor)", method: .get, headers: .bearer(phone))
            let listed = try #require(page.body.json["notifications"] as? [[String: Any]])
            #expect(listed.map { $0["id"] as? String } == [ids[2].uuidString.lowercased()])
            #expect(try await client.execute(uri: "/v1/notifications/\(ids[0])", method: .get, headers: .bearer(tablet)).status == .ok)

            let fetches: [String] = try await firstColumn(
                db, "SELECT notification_id::text || ' ' || device_id::text FROM securepush.fetches ORDER BY 1")
            let expected = [(ids[0], phoneID), (ids[0], tabletID), (ids[1], phoneID), (ids[2], phoneID)]
                .map { "\($0.uuidString.lowercased()) \($1.uuidString.lowercased())" }.sorted()
            #expect(fetches.sorted() == expected, "one row per device's first fetch, nothing for the plain listing")

            // read_at is the first fetch of any device, in the same statement as the phone's fetched_at.
            let readIsFirstFetch: Bool = try await db.scalar(
                """
                SELECT n.read_at = f.fetched_at AND n.read_by_device = \(phoneID)
                FROM securepush.notifications n JOIN securepush.fetches f ON f.notification_id = n.id AND f.device_id = \(phoneID)
                WHERE n.id = \(ids[0])
                """)
            #expect(readIsFirstFetch)
            let tabletLater: Bool = try await db.scalar(
                """
                SELECT f.fetched_at > n.read_at FROM securepush.notifications n
                JOIN securepush.fetches f ON f.notification_id = n.id AND f.device_id = \(tabletID) WHERE n.id = \(ids[0])
                """)
            #expect(tabletLater, "the tablet's own first fetch is recorded; read_at keeps the phone's")
            let fetchedAfterAccepted: Bool = try await db.scalar(
                """
                SELECT bool_and(f.fetched_at >= l.accepted_at) FROM securepush.fetches f
                JOIN securepush.delivery_log l ON l.notification_id = f.notification_id AND l.device_id = f.device_id
                """)
            #expect(fetchedAfterAccepted)

            // The ratio: 4 of 8 accepted pushes fetched by their device; the latencies computed here from the rows.
            let latencies: [Double] = try await firstColumn(
                db,
                """
                SELECT extract(epoch FROM f.fetched_at - l.accepted_at)::float8 FROM securepush.fetches f
                JOIN securepush.delivery_log l ON l.notification_id = f.notification_id AND l.device_id = f.device_id ORDER BY 1
                """)
            #expect(latencies.count == 4)
            let status = try await client.execute(uri: "/status", method: .get)
            let rows = try #require(status.body.json["fetch_last_hour"] as? [[String: Any]])
            #expect(rows.count == 1)
            let simulated = try #require(rows.first)
            #expect(simulated["platform"] as? String == "simulated")
            #expect(simulated["accepted"] as? Int == 8)
            #expect(simulated["fetched"] as? Int == 4)
            #expect(simulated["fetch_ratio"] as? Double == 0.5)
            let p50 = try #require(simulated["push_to_fetch_p50_seconds"] as? Double)
            let p99 = try #require(simulated["push_to_fetch_p99_seconds"] as? Double)
            #expect(abs(p50 - percentile(latencies, 0.5)) < 1e-5, "p50 \(p50) of \(latencies)")
            #expect(abs(p99 - percentile(latencies, 0.99)) < 1e-5, "p99 \(p99) of \(latencies)")
            #expect(p50 <= p99)

            // Pushes accepted more than an hour ago leave the window.
            try await db.execute(
                "UPDATE securepush.delivery_log SET accepted_at = accepted_at - interval '2 hours', finished_at = finished_at - interval '2 hours'"
            )
            let later = try await client.execute(uri: "/status", method: .get)
            #expect((later.body.json["fetch_last_hour"] as? [Any])?.isEmpty == true)
        }
    }

    @Test("securepush.notification_status: pending, finished and fetch-only rows per device")
    func statusView() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let phone = try await registerDevice(client, api, user: "max", token: "max-phone")
            // A platform no dispatcher here pushes to: its delivery stays pending.
            let waiting = try await db.insertDevice(user: "max", platform: "fcm", token: "max-fcm-token-0123456789")
            let harness = try DispatcherHarness(database: db)
            let id = try await db.enqueue(user: "max", payload: #"{"secret":"VIEW"}"#)
            try await db.eventually("the phone's push accepted") {
                try await db.scalar("SELECT count(*)::bigint FROM securepush.delivery_log WHERE outcome = 'sent'") == Int64(1)
            }
            await harness.stop()
            #expect(try await client.execute(uri: "/v1/notifications/\(id)", method: .get, headers: .bearer(phone)).status == .ok)
            // Registered after the push: it catches up without a push of its own.
            let laptop = try await registerDevice(client, api, user: "max", token: "max-laptop")
            let caughtUp = try await client.execute(
                uri: "/v1/notifications?include=payload", method: .get, headers: .bearer(laptop))
            #expect((caughtUp.body.json["notifications"] as? [Any])?.count == 1)

            let view: [String] = try await firstColumn(
                db,
                """
                SELECT concat_ws(' ', device_id, platform, state, coalesce(outcome, '-'), attempts,
                                 next_attempt_at IS NOT NULL, accepted_at IS NOT NULL, fetched_at IS NOT NULL,
                                 read_at IS NOT NULL, user_id)
                FROM securepush.notification_status WHERE notification_id = \(id) ORDER BY 1
                """)
            let expected = [
                "\(try deviceID(of: phone).uuidString.lowercased()) simulated finished sent 1 f t t t max",
                "\(waiting.uuidString.lowercased()) fcm pending - 0 t f f t max",
                "\(try deviceID(of: laptop).uuidString.lowercased()) simulated not_pushed - 0 f f t t max",
            ].sorted()
            #expect(view.sorted() == expected)
            let timesAgree: Bool = try await db.scalar(
                """
                SELECT s.accepted_at = l.accepted_at AND s.fetched_at = f.fetched_at
                FROM securepush.notification_status s
                JOIN securepush.delivery_log l ON l.notification_id = s.notification_id AND l.device_id = s.device_id
                JOIN securepush.fetches f ON f.notification_id = s.notification_id AND f.device_id = s.device_id
                WHERE s.notification_id = \(id)
                """)
            #expect(timesAgree)
            let byUser: Int64 = try await db.scalar("SELECT count(*)::bigint FROM securepush.notification_status WHERE user_id = 'max'")
            #expect(byUser == 3)
        }
    }

    @Test("the /metrics gauges: accepted, fetched, ratio and latency per platform, refreshed from the database")
    func gauges() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let phone = try await registerDevice(client, api, user: "ned", token: "ned-phone")
            _ = try await registerDevice(client, api, user: "ned", token: "ned-tablet")
            let harness = try DispatcherHarness(database: db)
            let ids = [
                try await db.enqueue(user: "ned", payload: #"{"secret":"GAUGE-PAYLOAD"}"#), try await db.enqueue(user: "ned", payload: "{}"),
            ]
            try await db.eventually("4 pushes accepted") {
                try await db.scalar("SELECT count(*)::bigint FROM securepush.delivery_log WHERE outcome = 'sent'") == Int64(4)
            }
            await harness.stop()
            let body = ByteBuffer(string: #"{"ids":["\#(ids[0])"]}"#)
            #expect(try await client.execute(uri: "/v1/notifications/fetch", method: .post, headers: .bearer(phone), body: body).status == .ok)

            let registry = PrometheusCollectorRegistry()
            let service = FetchStatsService(
                status: StatusStore(client: db.client, staleAfter: .seconds(30), logger: db.logger), registry: registry,
                interval: .seconds(60), timeout: .seconds(10), logger: db.logger)
            try await service.refresh()
            let text = registry.emitToString()
            #expect(sample(text, #"securepush_pushes_accepted_last_hour{platform="simulated"}"#) == 4)
            #expect(sample(text, #"securepush_pushes_fetched_last_hour{platform="simulated"}"#) == 1)
            #expect(sample(text, #"securepush_fetch_ratio{platform="simulated"}"#) == 0.25)
            let latency: Double = try await db.scalar(
                """
                SELECT extract(epoch FROM f.fetched_at - l.accepted_at)::float8 FROM securepush.fetches f
                JOIN securepush.delivery_log l ON l.notification_id = f.notification_id AND l.device_id = f.device_id
                """)
            for quantile in ["0.5", "0.99"] {
                let gauge = sample(text, #"securepush_push_to_fetch_seconds{platform="simulated",quantile="\#(quantile)"}"#)
                #expect(gauge.map { abs($0 - latency) < 1e-5 } == true, "\(quantile): \(gauge ?? -1) vs \(latency)")
            }
            #expect(!text.contains("GAUGE-PAYLOAD"))

            // An hour later: nothing accepted, no ratio or latency series.
            try await db.execute(
                "UPDATE securepush.delivery_log SET accepted_at = accepted_at - interval '2 hours', finished_at = finished_at - interval '2 hours'"
            )
            try await service.refresh()
            let quiet = registry.emitToString()
            #expect(sample(quiet, #"securepush_pushes_accepted_last_hour{platform="simulated"}"#) == 0)
            #expect(sample(quiet, #"securepush_pushes_fetched_last_hour{platform="simulated"}"#) == 0)
            #expect(!quiet.contains("securepush_fetch_ratio{"))
            #expect(!quiet.contains("securepush_push_to_fetch_seconds{"))
        }
    }

    @Test("securepush serve --role api refreshes the fetch gauges of /metrics from the database")
    func servedGauges() async throws {
        try await TestDatabase.with { db in
            let device = try await db.insertDevice(user: "oli", token: "oli-1")
            let id = try await db.enqueue(user: "oli", payload: "{}")
            try await db.fanOut()
            // One push accepted (as a dispatcher records it) and fetched by its device.
            try await db.execute(
                """
                WITH d AS (DELETE FROM securepush.deliveries WHERE notification_id = \(id) RETURNING *)
                INSERT INTO securepush.delivery_log (id, notification_id, device_id, platform, outcome, attempts, created_at, accepted_at)
                SELECT id, notification_id, device_id, platform, 'sent', 1, created_at, now() FROM d
                """)
            try await db.execute("INSERT INTO securepush.fetches (notification_id, device_id) VALUES (\(id), \(device))")
            try await withServedAPI(db, environment: ["SECUREPUSH_FETCH_STATS_INTERVAL": "200ms"]) { port in
                try await eventually("/metrics shows the fetch gauges", timeout: .seconds(30)) {
                    let response = try await HTTPClient.shared.execute(
                        HTTPClientRequest(url: "http://127.0.0.1:\(port)/metrics"), timeout: .seconds(5))
                    let text = String(buffer: try await response.body.collect(upTo: 1 << 20))
                    return sample(text, #"securepush_pushes_accepted_last_hour{platform="simulated"}"#) == 1
                        && sample(text, #"securepush_fetch_ratio{platform="simulated"}"#) == 1
                        && sample(text, #"securepush_push_to_fetch_seconds{platform="simulated",quantile="0.99"}"#) != nil
                }
            }
        }
    }
}

/// The first column of every row, decoded.
func firstColumn<V: PostgresDecodable & Sendable>(_ db: TestDatabase, _ query: PostgresQuery) async throws -> [V] {
    var values: [V] = []
    for try await value in try await db.client.query(query, logger: db.logger).decode(V.self) {
        values.append(value)
    }
    return values
}

/// PostgreSQL's `percentile_cont`: linear interpolation between the closest ranks of the sorted values.
func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
    let position = fraction * Double(sorted.count - 1)
    let lower = Int(position.rounded(.down))
    let upper = min(lower + 1, sorted.count - 1)
    return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - Double(lower))
}

/// The value of the sample line `series` in Prometheus text, if present.
func sample(_ text: String, _ series: String) -> Double? {
    text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
}
