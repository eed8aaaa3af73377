import Foundation
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import SecurePushCore
import SecurePushProviders
import SecurePushTestSupport
import Testing

/// `securepush probe`, run as the real binary against a test database with an in-process dispatcher and API.
@Suite("securepush probe")
struct ProbeTests {
    /// The line of the probe's table for `device`.
    static func line(_ output: String, _ device: UUID) -> String? {
        output.split(separator: "\n").map(String.init).first { $0.hasPrefix(device.uuidString.lowercased()) }
    }

    /// The seconds of the `n`th "<number> s" in `line`.
    static func seconds(_ line: String) -> [Double] {
        let words = line.split(separator: " ")
        return zip(words, words.dropFirst()).compactMap { $1 == "s" ? Double($0) : nil }
    }

    @Test("a device that fetches and one that does not: accepted and fetched after, or not fetched; exit 0")
    func fetchedAndNot() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let phone = try await registerDevice(client, api, user: "una", token: "una-phone")
            let tablet = try await registerDevice(client, api, user: "una", token: "una-tablet")
            let (phoneID, tabletID) = (try deviceID(of: phone), try deviceID(of: tablet))
            let harness = try DispatcherHarness(database: db)
            // The phone's app fetches every push it gets; the tablet's never does.
            let app = Task {
                var fetched: Set<String> = []
                while !Task.isCancelled {
                    for push in harness.pushes where push.deviceID == phoneID.uuidString.lowercased() && !fetched.contains(push.notificationID) {
                        let response = try await client.execute(
                            uri: "/v1/notifications/\(push.notificationID)", method: .get, headers: .bearer(phone))
                        #expect((response.body.json["payload"] as? [String: Any])?["securepush_probe"] as? Bool == true)
                        fetched.insert(push.notificationID)
                    }
                    try? await Task.sleep(for: .milliseconds(20))
                }
            }
            let run = try await CommandTests.run(["probe", "--user", "una", "--timeout", "3s"], environment: ["DATABASE_URL": db.url.urlString])
            app.cancel()
            _ = await app.result
            await harness.stop()
            #expect(run.status == 0, "\(run.output)")
            let phoneLine = try #require(Self.line(run.output, phoneID), "\(run.output)")
            let tabletLine = try #require(Self.line(run.output, tabletID), "\(run.output)")
            #expect(phoneLine.contains("simulated") && phoneLine.contains(" sent "), "\(phoneLine)")
            #expect(tabletLine.contains(" sent ") && tabletLine.hasSuffix("not fetched"), "\(tabletLine)")
            #expect(run.output.contains("timed out after 3.000 s"), "the tablet never settled: \(run.output)")

            // The printed times are the database's, to the millisecond.
            let probe: UUID = try await db.scalar("SELECT id FROM securepush.notifications WHERE payload ? 'securepush_probe'")
            let (accepted, fetched): (Double, Double) = try await db.client.query(
                """
                SELECT extract(epoch FROM accepted_at - created_at)::float8, extract(epoch FROM fetched_at - created_at)::float8
                FROM securepush.notification_status WHERE notification_id = \(probe) AND device_id = \(phoneID)
                """, logger: db.logger
            ).collect()[0].decode((Double, Double).self)
            let printed = Self.seconds(phoneLine)
            #expect(printed.count == 2, "\(phoneLine)")
            #expect(abs((printed.first ?? -1) - accepted) < 0.0011, "\(printed) vs accepted \(accepted)")
            #expect(abs((printed.last ?? -1) - fetched) < 0.0011, "\(printed) vs fetched \(fetched)")
            #expect(Self.seconds(tabletLine).count == 1, "the tablet's push was accepted, never fetched")
            let payload: String = try await db.scalar("SELECT payload::text FROM securepush.notifications WHERE id = \(probe)")
            #expect(payload.contains(#""title": "SecurePush probe""#))
            let ttl: Double = try await db.scalar(
                "SELECT extract(epoch FROM expires_at - created_at)::float8 FROM securepush.notifications WHERE id = \(probe)")
            #expect(ttl == 3, "the probe expires with its timeout")
        }
    }

    @Test("no device accepted the probe: exit non-zero with the reason; a failed push settles at once; no device at all: exit non-zero")
    func nothingAccepted() async throws {
        try await TestDatabase.with { db in
            let broken = try await db.insertDevice(user: "val", token: "val-broken")
            // No dispatcher here pushes to FCM: that delivery stays pending.
            let waiting = try await db.insertDevice(user: "wes", platform: "fcm", token: "wes-fcm-token-0123456789")
            let harness = try DispatcherHarness(database: db) { _ in .failed(reason: "BadDeviceToken") }
            let environment = ["DATABASE_URL": db.url.urlString]

            let failed = try await CommandTests.run(["probe", "--user", "val", "--timeout", "30s"], environment: environment)
            let pending = try await CommandTests.run(["probe", "--user", "wes", "--timeout", "1s"], environment: environment)
            let nobody = try await CommandTests.run(["probe", "--user", "nobody", "--timeout", "30s"], environment: environment)
            await harness.stop()

            #expect(failed.status != 0, "\(failed.output)")
            let brokenLine = try #require(Self.line(failed.output, broken), "\(failed.output)")
            #expect(brokenLine.contains(" failed ") && brokenLine.contains("not accepted") && brokenLine.hasSuffix("not fetched"), "\(brokenLine)")
            #expect(failed.output.contains("last error:") && failed.output.contains("BadDeviceToken"), "\(failed.output)")
            #expect(!failed.output.contains("timed out"), "a failed push settles the probe before its timeout")

            #expect(pending.status != 0, "\(pending.output)")
            let waitingLine = try #require(Self.line(pending.output, waiting), "\(pending.output)")
            #expect(waitingLine.contains("fcm") && waitingLine.contains("pending") && waitingLine.contains("not accepted"), "\(waitingLine)")
            #expect(pending.output.contains("timed out after 1.000 s"))

            #expect(nobody.status != 0)
            #expect(nobody.output.contains("no active device"), "\(nobody.output)")
            #expect(nobody.elapsed < .seconds(20), "nothing to wait for")

            let bad = try await CommandTests.run(["probe", "--user", "val", "--timeout", "soon"], environment: environment)
            #expect(bad.status != 0)
            #expect(bad.output.contains("--timeout"), "\(bad.output)")
        }
    }
}
