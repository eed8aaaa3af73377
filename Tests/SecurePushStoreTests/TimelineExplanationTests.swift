import Foundation
import SecurePushReports
import SecurePushStore
import Testing

@Suite("Timeline explanations")
struct TimelineExplanationTests {
    static func timeline(_ device: NotificationTimeline.Device, dispatchers: [String]? = ["apns"]) -> NotificationTimeline {
        var timeline = NotificationTimeline(notificationID: UUID())
        timeline.found = true
        timeline.userID = "ann"
        timeline.createdAt = Date(timeIntervalSince1970: 1_000)
        timeline.expiresAt = Date(timeIntervalSince1970: 90_000)
        timeline.devices = [device]
        timeline.dispatcherPlatforms = dispatchers
        return timeline
    }

    static func device(waiting: [NotificationTimeline.Waiting] = [], finished: [NotificationTimeline.Finished] = []) -> NotificationTimeline.Device {
        NotificationTimeline.Device(
            deviceID: UUID(), platform: "apns", active: true, registeredAt: Date(timeIntervalSince1970: 10), waiting: waiting, finished: finished,
            fetchedAt: nil)
    }

    @Test("an unknown id is never called 'never enqueued' for sure: retention deletes expired notifications with their history")
    func unknownID() {
        let lines = TimelineExplanation.explain(NotificationTimeline(notificationID: UUID()), now: Date())
        #expect(lines.count == 1)
        #expect(lines[0].contains("never enqueued") && lines[0].contains("retention deleted it") && lines[0].contains("SECUREPUSH_RETENTION"))
        #expect(!lines[0].contains("does not delete"))
    }

    /// A found device with `pushes` accepted pushes, the first `fetched` of them fetched, and `waiting` deliveries.
    static func device(pushes: Int, fetched: Int, waiting: Int = 0) throws -> DeviceTimeline {
        var timeline = DeviceTimeline(deviceID: UUID())
        timeline.found = true
        timeline.waiting = waiting
        let ids = (0..<pushes).map { _ in UUID() }
        let pushRows = ids.map { #"{"notificationID":"\#($0)","kind":"notify","outcome":"sent","attempts":1,"finishedAt":0}"# }
        timeline.pushes = try JSONDecoder().decode([DeviceTimeline.Push].self, from: Data("[\(pushRows.joined(separator: ","))]".utf8))
        let fetchRows = ids.prefix(fetched).map { #"{"notificationID":"\#($0)","fetchedAt":0}"# }
        timeline.fetches = try JSONDecoder().decode([DeviceTimeline.Fetch].self, from: Data("[\(fetchRows.joined(separator: ","))]".utf8))
        return timeline
    }

    @Test("a device's counts read as English: one push, one delivery, one fetched among several")
    func deviceCounts() throws {
        let cases: [(pushes: Int, fetched: Int, waiting: Int, says: [String])] = [
            (1, 1, 1, ["1 delivery is waiting for it.", "Its last accepted push was fetched by the device."]),
            (1, 0, 2, ["2 deliveries are waiting for it.", "Its last accepted push was not fetched by the device (the app did not ask for it)."]),
            (3, 1, 0, ["Of its last 3 accepted pushes, 1 was fetched by the device; 2 were not (the app did not ask for them)."]),
            (3, 2, 0, ["Of its last 3 accepted pushes, 2 were fetched by the device; 1 was not (the app did not ask for them)."]),
            (2, 2, 0, ["Of its last 2 accepted pushes, 2 were fetched by the device."]),
        ]
        for row in cases {
            let lines = TimelineExplanation.explain(try Self.device(pushes: row.pushes, fetched: row.fetched, waiting: row.waiting))
            for sentence in row.says { #expect(lines.contains(sentence), "\(sentence) in \(lines)") }
        }
    }

    @Test("a dead token, a retry, a schedule, an expiry and a dispatcher too old to say are each named")
    func sentences() {
        let dead = TimelineExplanation.explain(
            Self.timeline(
                Self.device(finished: [
                    .init(
                        kind: "notify", outcome: "token_invalid", attempts: 1, acceptedAt: nil, finishedAt: Date(), providerMessageID: nil,
                        lastError: "BadDeviceToken")
                ])), now: Date())
        #expect(dead.contains { $0.contains("refused the device's token") && $0.contains("BadDeviceToken") }, "\(dead)")
        let retrying = TimelineExplanation.explain(
            Self.timeline(Self.device(waiting: [.init(kind: "notify", state: "pending", attempts: 3, nextAttemptAt: Date(), lastError: "HTTP 503")])),
            now: Date())
        #expect(retrying.contains { $0.contains("retrying after 3 attempts") && $0.contains("HTTP 503") }, "\(retrying)")
        let scheduled = TimelineExplanation.explain(
            Self.timeline(Self.device(waiting: [.init(kind: "notify", state: "scheduled", attempts: 0, nextAttemptAt: Date(), lastError: nil)])),
            now: Date())
        #expect(scheduled.contains { $0.contains("scheduled for") && $0.contains("quiet hours") }, "\(scheduled)")
        let expired = TimelineExplanation.explain(
            Self.timeline(
                Self.device(finished: [
                    .init(
                        kind: "notify", outcome: "expired", attempts: 2, acceptedAt: nil, finishedAt: Date(), providerMessageID: nil, lastError: nil)
                ])), now: Date())
        #expect(expired.contains { $0.contains("expired at") }, "\(expired)")
        // A dispatcher of an older build does not say what it pushes: no claim that nobody pushes the platform.
        let unknown = TimelineExplanation.explain(
            Self.timeline(
                Self.device(waiting: [
                    .init(kind: "notify", state: "pending", attempts: 0, nextAttemptAt: Date(timeIntervalSince1970: 0), lastError: nil)
                ]), dispatchers: nil),
            now: Date())
        #expect(!unknown.contains { $0.contains("no live dispatcher") } && unknown.contains { $0.contains("first attempt since") }, "\(unknown)")
    }

    @Test("a notification not yet fanned out says so, and says when no dispatcher runs to do it")
    func awaitingFanOut() {
        var queued = Self.timeline(Self.device())
        queued.awaitingFanOut = true
        let running = TimelineExplanation.explain(queued, now: Date())
        #expect(running.contains { $0.contains("waiting for its fan-out") && $0.contains("next claim") }, "\(running)")
        #expect(!running.contains { $0.contains("Not pushed") }, "\(running)")
        queued.dispatcherPlatforms = []
        let stopped = TimelineExplanation.explain(queued, now: Date())
        #expect(stopped.contains { $0.contains("no dispatcher is running") }, "\(stopped)")
    }
}
