import Foundation
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
