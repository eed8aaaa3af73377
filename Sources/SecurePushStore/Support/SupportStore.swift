import Foundation
import Logging
import PostgresNIO
import SecurePushCore
import SecurePushPostgres
import SecurePushReports

/// The support lookup's reads (docs/operations.md, "A notification that did not arrive"): one notification's
/// timeline and one device's history, from the tables the pipeline already writes. Read-only.
public struct SupportStore: Sendable {
    let database: StoreDatabase

    /// How many recent pushes, fetches and events a device's history shows.
    public static let deviceHistory = 20

    /// A store on `client`.
    public init(client: any DatabaseClient, logger: Logger) {
        self.database = StoreDatabase(client: client, logger: logger)
    }

    /// The timeline of notification `id` (`found` is false for an id the database does not know).
    public func notification(_ id: UUID) async throws -> NotificationTimeline {
        var timeline = NotificationTimeline(notificationID: id)
        let rows = try await database.query(
            """
            SELECT n.user_id, n.created_at, n.deliver_at, n.expires_at, n.urgency, n.category, n.read_at, n.read_by_device, n.purged_at,
                   n.cancelled_at,
                   (SELECT m.muted_at FROM securepush.category_mutes m WHERE m.user_id = n.user_id AND m.category = n.category) AS muted_at,
                   EXISTS (SELECT 1 FROM securepush.fan_out_queue q WHERE q.notification_id = n.id) AS awaiting_fan_out
            FROM securepush.notifications n WHERE n.id = \(id)
            """
        ).collect()
        if let row = rows.first {
            let named = NamedRow(row)
            timeline.found = true
            timeline.userID = try named("user_id")
            timeline.createdAt = try named("created_at")
            timeline.deliverAt = try named("deliver_at")
            timeline.expiresAt = try named("expires_at")
            timeline.urgency = try named("urgency")
            timeline.category = try named("category")
            timeline.readAt = try named("read_at")
            timeline.readByDevice = try named("read_by_device")
            timeline.payloadPurgedAt = try named("purged_at")
            timeline.cancelledAt = try named("cancelled_at")
            timeline.categoryMutedAt = try named("muted_at")
            timeline.awaitingFanOut = try named("awaiting_fan_out")
            timeline.devices = try await devices(of: timeline.userID ?? "", notification: id)
            timeline.dispatcherPlatforms = try await liveDispatcherPlatforms()
        }
        timeline.explanation = TimelineExplanation.explain(timeline, now: Date())
        return timeline
    }

    /// The user's devices with what happened to notification `id` on each.
    private func devices(of user: String, notification id: UUID) async throws -> [NotificationTimeline.Device] {
        var devices: [UUID: NotificationTimeline.Device] = [:]
        var order: [UUID] = []
        for try await row in try await database.query(
            """
            SELECT d.id, d.platform, d.active, d.created_at,
                   (SELECT f.fetched_at FROM securepush.fetches f WHERE f.notification_id = \(id) AND f.device_id = d.id) AS fetched_at
            FROM securepush.devices d
            WHERE d.user_id = \(user)
               OR d.id IN (SELECT dl.device_id FROM securepush.delivery_log dl WHERE dl.notification_id = \(id))
               OR d.id IN (SELECT de.device_id FROM securepush.deliveries de WHERE de.notification_id = \(id))
               OR d.id IN (SELECT c.device_id FROM securepush.claimed_items c WHERE c.notification_id = \(id))
            ORDER BY d.created_at
            """)
        {
            let named = NamedRow(row)
            let device = NotificationTimeline.Device(
                deviceID: try named("id"), platform: try named("platform"), active: try named("active"), registeredAt: try named("created_at"),
                waiting: [], finished: [], fetchedAt: try named("fetched_at"))
            devices[device.deviceID] = device
            order.append(device.deviceID)
        }
        for try await row in try await database.query(
            """
            SELECT device_id, kind, state, attempts, run_at, last_error FROM (
                SELECT device_id, kind, state, attempts, run_at, last_error, created_at FROM securepush.deliveries
                WHERE notification_id = \(id)
                UNION ALL
                -- Items of a claim's lease (migration 046): being pushed now, their first attempt.
                SELECT device_id, 'notify', \(DeliveryState.claimed), 1, NULL::timestamptz, NULL::text, claimed_at
                FROM securepush.claimed_items WHERE notification_id = \(id)
            ) w
            ORDER BY created_at
            """)
        {
            let named = NamedRow(row)
            let device: UUID = try named("device_id")
            devices[device]?.waiting.append(
                .init(
                    kind: try named("kind"), state: try named("state"), attempts: Int(try named("attempts", as: Int32.self)),
                    nextAttemptAt: try named("run_at"), lastError: try named("last_error")))
        }
        for try await row in try await database.query(
            """
            SELECT device_id, kind, outcome, attempts, accepted_at, finished_at, provider_message_id, last_error FROM securepush.delivery_log
            WHERE notification_id = \(id) ORDER BY finished_at
            """)
        {
            let named = NamedRow(row)
            let device: UUID = try named("device_id")
            devices[device]?.finished.append(
                .init(
                    kind: try named("kind"), outcome: try named("outcome"), attempts: Int(try named("attempts", as: Int32.self)),
                    acceptedAt: try named("accepted_at"), finishedAt: try named("finished_at"), providerMessageID: try named("provider_message_id"),
                    lastError: try named("last_error")))
        }
        return order.compactMap { devices[$0] }
    }

    /// The platforms the live dispatchers push (a dispatcher seen in the last minute), `nil` when one of them is too
    /// old to say which.
    private func liveDispatcherPlatforms() async throws -> [String]? {
        let rows = try await database.query(
            """
            SELECT bool_and(platforms IS NOT NULL) AS known, coalesce(array_agg(DISTINCT p) FILTER (WHERE p IS NOT NULL), '{}') AS platforms
            FROM securepush.dispatchers d LEFT JOIN LATERAL unnest(d.platforms) p ON true
            WHERE d.stopped_at IS NULL AND d.last_seen_at > now() - interval '1 minute'
            """
        ).collect()
        guard let row = rows.first else { return [] }
        let named = NamedRow(row)
        let known: Bool? = try named("known")
        if known == false { return nil }
        return (try named("platforms", as: [String].self)).sorted()
    }

    /// The history of device `id` (`found` is false for an id the database does not know).
    public func device(_ id: UUID) async throws -> DeviceTimeline {
        var timeline = DeviceTimeline(deviceID: id)
        let rows = try await database.query(
            """
            SELECT user_id, platform, active, created_at, last_seen_at, deactivated_reason, seal_public IS NOT NULL AS sealing,
                   (SELECT count(*) FROM securepush.deliveries de WHERE de.device_id = d.id)
                   + (SELECT count(*) FROM securepush.claimed_items c WHERE c.device_id = d.id) AS waiting
            FROM securepush.devices d WHERE d.id = \(id)
            """
        ).collect()
        if let row = rows.first {
            let named = NamedRow(row)
            timeline.found = true
            timeline.userID = try named("user_id")
            timeline.platform = try named("platform")
            timeline.active = try named("active")
            timeline.registeredAt = try named("created_at")
            timeline.lastSeenAt = try named("last_seen_at")
            timeline.deactivatedReason = try named("deactivated_reason")
            timeline.sealing = try named("sealing")
            timeline.waiting = Int(try named("waiting", as: Int64.self))
            let limit = Int32(Self.deviceHistory)
            for try await row in try await database.query(
                """
                SELECT notification_id, kind, outcome, attempts, accepted_at, finished_at, last_error FROM securepush.delivery_log
                WHERE device_id = \(id) ORDER BY finished_at DESC LIMIT \(limit)
                """)
            {
                let named = NamedRow(row)
                timeline.pushes.append(
                    .init(
                        notificationID: try named("notification_id"), kind: try named("kind"), outcome: try named("outcome"),
                        attempts: Int(try named("attempts", as: Int32.self)), acceptedAt: try named("accepted_at"),
                        finishedAt: try named("finished_at"), lastError: try named("last_error")))
            }
            for try await row in try await database.query(
                "SELECT notification_id, fetched_at FROM securepush.fetches WHERE device_id = \(id) ORDER BY fetched_at DESC LIMIT \(limit)")
            {
                let named = NamedRow(row)
                timeline.fetches.append(.init(notificationID: try named("notification_id"), fetchedAt: try named("fetched_at")))
            }
            for try await row in try await database.query(
                "SELECT at, event, reason FROM securepush.audit_log WHERE device_id = \(id) ORDER BY at DESC, id DESC LIMIT \(limit)")
            {
                let named = NamedRow(row)
                timeline.events.append(.init(at: try named("at"), event: try named("event"), reason: try named("reason")))
            }
        }
        timeline.explanation = TimelineExplanation.explain(timeline)
        return timeline
    }
}
