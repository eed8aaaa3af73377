import Foundation
import SecurePushCore

/// The timelines in words: each rule says what happened, and, where nothing happened, why (the one home of these
/// sentences: the CLI, the JSON and the page show them as they are).
public enum TimelineExplanation {
    /// How a time reads in a sentence: as everywhere else (`APITimestamp`).
    static func at(_ date: Date) -> String {
        APITimestamp.string(date)
    }

    /// Why notification `timeline` went where it went.
    public static func explain(_ timeline: NotificationTimeline, now: Date) -> [String] {
        guard timeline.found, let created = timeline.createdAt else {
            return [
                "No notification with this id. Either it was never enqueued (the producer's transaction rolled back, or another id was given), or retention deleted it: a notification is deleted with its history SECUREPUSH_RETENTION (7 days by default) after it expires. Nothing of a deleted notification is kept, so SecurePush cannot tell which."
            ]
        }
        var lines = [
            "Enqueued at \(at(created)) for user \(timeline.userID ?? "?") (urgency \(timeline.urgency ?? "active")\(timeline.category.map { ", category \($0)" } ?? ""))."
        ]
        if let deliverAt = timeline.deliverAt, deliverAt > created {
            lines.append("Scheduled by its producer for \(at(deliverAt)).")
        }
        if let cancelled = timeline.cancelledAt { lines.append("Cancelled by its producer at \(at(cancelled)).") }
        let anyDelivery = timeline.devices.contains { !$0.waiting.isEmpty || !$0.finished.isEmpty }
        let notify = { (device: NotificationTimeline.Device) in
            device.waiting.contains { $0.kind == "notify" } || device.finished.contains { $0.kind == "notify" }
        }
        if timeline.awaitingFanOut {
            let running = timeline.dispatcherPlatforms.map { !$0.isEmpty } ?? true
            lines.append(
                running
                    ? "Committed and waiting for its fan-out: the next claim of any dispatcher makes its deliveries (normally within milliseconds)."
                    : "Committed and waiting for its fan-out, and no dispatcher is running: its deliveries are made when one starts.")
        } else if !anyDelivery {
            if let muted = timeline.categoryMutedAt, muted <= created {
                lines.append(
                    "Not pushed: the user had muted category \(timeline.category ?? "?") (at \(at(muted))). It is stored and listed, never pushed.")
            } else if !timeline.devices.contains(where: { $0.registeredAt <= created }) {
                lines.append(
                    "Not pushed: the user had no registered device when it was enqueued (a device registered later catches up by listing unread notifications)."
                )
            } else if !timeline.devices.contains(where: { $0.active }) {
                lines.append(
                    "Not pushed: none of the user's devices is active (each was unregistered, or retired after its platform refused its token).")
            } else if let expires = timeline.expiresAt, expires <= created {
                lines.append("Not pushed: it expired when it was enqueued.")
            } else {
                lines.append(
                    "Not pushed and no delivery row: it was superseded or cancelled before a delivery was made, or its deliveries were pruned.")
            }
        }
        for device in timeline.devices where notify(device) || device.fetchedAt != nil {
            let name = "Device \(device.deviceID.uuidString.lowercased()) (\(device.platform)\(device.active ? "" : ", no longer active"))"
            for waiting in device.waiting where waiting.kind == "notify" {
                lines.append(waitingSentence(name, waiting, platform: device.platform, dispatchers: timeline.dispatcherPlatforms, now: now))
            }
            for finished in device.finished where finished.kind == "notify" {
                lines.append(finishedSentence(name, finished, platform: device.platform))
            }
            if let fetched = device.fetchedAt {
                lines.append("\(name): fetched by the device at \(at(fetched)).")
            } else if device.finished.contains(where: { $0.kind == "notify" && $0.outcome == "sent" }) {
                lines.append(
                    "\(name): not fetched: the platform accepted the push but the app never asked for the notification (notifications off, the app or its extension not running, or the phone offline since)."
                )
            }
        }
        if let read = timeline.readAt {
            lines.append("Read at \(at(read))\(timeline.readByDevice.map { " on device \($0.uuidString.lowercased())" } ?? "").")
        }
        if let purged = timeline.payloadPurgedAt {
            lines.append(
                "Its payload was purged at \(at(purged)) (after it was read, expired or was cancelled): the record stays, the content does not.")
        }
        return lines
    }

    static func waitingSentence(_ name: String, _ waiting: NotificationTimeline.Waiting, platform: String, dispatchers: [String]?, now: Date)
        -> String
    {
        switch waiting.state {
        case "scheduled":
            return "\(name): scheduled for \(at(waiting.nextAttemptAt)) (its producer's time, or the end of the user's quiet hours)."
        case "claimed":
            return "\(name): being pushed now (claimed; attempt \(waiting.attempts + 1))."
        default:
            if let dispatchers, !dispatchers.contains(platform) {
                let pushing = dispatchers.isEmpty ? "no dispatcher is running" : "the live dispatchers push \(dispatchers.joined(separator: ", "))"
                return
                    "\(name): waiting with \(waiting.attempts) attempts: no live dispatcher pushes \(platform) (\(pushing)); add \(platform) to a dispatcher's SECUREPUSH_PROVIDERS."
            }
            if waiting.attempts == 0 {
                return waiting.nextAttemptAt > now
                    ? "\(name): waiting for its first attempt at \(at(waiting.nextAttemptAt))."
                    : "\(name): waiting for its first attempt since \(at(waiting.nextAttemptAt)) (the dispatchers are behind, or this platform's circuit is open: see /status)."
            }
            return
                "\(name): retrying after \(waiting.attempts) attempts, next at \(at(waiting.nextAttemptAt))\(waiting.lastError.map { "; last error: \($0)" } ?? "")."
        }
    }

    static func finishedSentence(_ name: String, _ finished: NotificationTimeline.Finished, platform: String) -> String {
        switch finished.outcome {
        case "sent":
            let accepted = finished.acceptedAt ?? finished.finishedAt
            return
                "\(name): accepted by \(platform) at \(at(accepted)) after \(finished.attempts) attempt\(finished.attempts == 1 ? "" : "s")\(finished.providerMessageID.map { " (its id \($0))" } ?? "")."
        case "token_invalid":
            return
                "\(name): \(platform) refused the device's token at \(at(finished.finishedAt)) (it is dead: uninstalled, or the token was replaced); the device was retired\(finished.lastError.map { " (\($0))" } ?? "")."
        case "failed":
            return "\(name): failed at \(at(finished.finishedAt)) after \(finished.attempts) attempts\(finished.lastError.map { ": \($0)" } ?? "")."
        case "expired":
            return "\(name): expired at \(at(finished.finishedAt)) before it could be pushed (after \(finished.attempts) attempts)."
        case "cancelled":
            return "\(name): cancelled at \(at(finished.finishedAt)) before it was pushed."
        case "superseded":
            return "\(name): replaced at \(at(finished.finishedAt)) by a newer notification with the same collapse key before it was pushed."
        default:
            return "\(name): \(finished.outcome) at \(at(finished.finishedAt))."
        }
    }

    /// What device `timeline`'s history says.
    public static func explain(_ timeline: DeviceTimeline) -> [String] {
        guard timeline.found else { return ["No device with this id: it was never registered, or was deleted after its retention."] }
        var lines = [
            "Registered\(timeline.registeredAt.map { " at \(at($0))" } ?? "") for user \(timeline.userID ?? "?") on \(timeline.platform ?? "?")."
        ]
        if timeline.active == false {
            lines.append(
                "Not active: \(timeline.deactivatedReason ?? "unregistered or retired"). Nothing is pushed to it; the app registers again to receive."
            )
        }
        if let seen = timeline.lastSeenAt { lines.append("Last seen (a request with its credential) at \(at(seen)).") }
        if timeline.sealing == true { lines.append("Has a sealing key: previews are sealed to it.") }
        if timeline.waiting > 0 {
            lines.append(timeline.waiting == 1 ? "1 delivery is waiting for it." : "\(timeline.waiting) deliveries are waiting for it.")
        }
        let sent = timeline.pushes.filter { $0.outcome == "sent" && $0.kind == "notify" }
        let fetched = Set(timeline.fetches.map(\.notificationID))
        if !sent.isEmpty {
            let unfetched = sent.filter { !fetched.contains($0.notificationID) }.count
            let fetchedCount = sent.count - unfetched
            let pushes = sent.count == 1 ? "Its last accepted push" : "Of its last \(sent.count) accepted pushes, \(fetchedCount)"
            let verb = sent.count == 1 ? (fetchedCount == 1 ? "was" : "was not") : (fetchedCount == 1 ? "was" : "were")
            let rest = sent.count > 1 && unfetched > 0 ? "; \(unfetched) \(unfetched == 1 ? "was" : "were") not (the app did not ask for them)" : ""
            let why = sent.count == 1 && unfetched == 1 ? " (the app did not ask for it)" : ""
            lines.append("\(pushes) \(verb) fetched by the device\(why)\(rest).")
        }
        if let refusal = timeline.events.first(where: { ["throttled", "token_invalid", "device_retired", "device_revoked"].contains($0.event) }) {
            lines.append("Latest refusal or retirement: \(refusal.event) at \(at(refusal.at))\(refusal.reason.map { " (\($0))" } ?? "").")
        }
        return lines
    }
}
