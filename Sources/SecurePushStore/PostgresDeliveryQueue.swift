import Foundation
import Logging
import PostgresNIO
import SecurePushCore
import SecurePushPostgres

/// The delivery queue on PostgreSQL: one statement to claim a batch, one to write its outcomes.
public struct PostgresDeliveryQueue: DeliveryQueue {
    let database: StoreDatabase
    /// Whether the claim computes each recipient's unread count for the pushes' badge (`SECUREPUSH_BADGE`).
    let unreadBadge: Bool
    /// Whether `awaitReplication` waits for the synchronous standbys (`SECUREPUSH_REPLICATION_GATE`).
    let replicationGate: Bool
    /// Whether claims return each push's preview and the device's sealing key (`SECUREPUSH_SEALED_PREVIEWS`).
    let sealedPreviews: Bool

    /// The largest badge: counting stops there, so a user with a huge backlog costs every claim no more.
    public static let badgeLimit = 999

    /// Creates a queue on an injected client; with `unreadBadge` every claimed push carries its recipient's
    /// unread count (unexpired, unread notifications, at most `badgeLimit`) at claim time; with
    /// `sealedPreviews` every notify push to a device that can open one carries a `PushSeal`.
    public init(
        client: any DatabaseClient, logger: Logger, unreadBadge: Bool = false, replicationGate: Bool = false, sealedPreviews: Bool = false
    ) {
        self.replicationGate = replicationGate
        self.sealedPreviews = sealedPreviews
        self.database = StoreDatabase(client: client, logger: logger)
        self.unreadBadge = unreadBadge
    }

    /// Sets the dispatcher's `awaiting_wakeup` (migration 013): producers notify again.
    public func awaitWakeup(worker: UUID) async throws {
        try await database.execute("SELECT securepush.await_wakeup(\(worker))")
    }

    public func claim(limit: Int, platforms: [Platform], lease: Duration, worker: UUID) async throws -> ClaimedBatch {
        let token = UUID.random()
        let platformNames = platforms.map(\.rawValue)
        let leaseMilliseconds = lease.wholeMilliseconds
        // One call of `securepush.claim_deliveries` (sql/routines/claim_deliveries.sql): its plan holds without statistics.
        let rows = try await database.query(
            """
            SELECT * FROM securepush.claim_deliveries(\(limit)::integer, \(platformNames)::text[], \(leaseMilliseconds), \(token), \(worker), \(unreadBadge),
                 \(Self.badgeLimit)::integer, \(sealedPreviews))
            """
        )
        var deliveries: [ClaimedDelivery] = []
        var rejected: [RejectedDelivery] = []
        deliveries.reserveCapacity(limit)
        let decoder = JSONDecoder()
        for try await postgresRow in rows {
            let row = try ClaimDeliveriesRow(row: postgresRow)
            guard let platform = Platform(rawValue: row.platform) else {
                rejected.append(RejectedDelivery(id: row.id, reason: "unknown platform \"\(row.platform)\""))
                continue
            }
            // Most devices have no options: `{}` needs no JSON decoder (1.4 % of a drain's CPU, issue 46).
            guard let options = row.options == "{}" ? [:] : try? decoder.decode([String: String].self, from: Data(row.options.utf8)) else {
                rejected.append(RejectedDelivery(id: row.id, reason: "device options are not a JSON object of strings"))
                continue
            }
            // A read-sync clear carries the ids to remove; every other delivery announces its notification.
            let kind = row.clearIDs.map { PushKind.clear($0.map(NotificationID.init)) } ?? .notify
            let push = Push(
                kind: kind,
                notificationID: NotificationID(row.notificationID),
                target: PushTarget(deviceID: row.deviceID, platform: platform, token: row.token, options: options),
                expiresAt: row.expiresAt,
                priority: Int(row.priority),
                attempt: Int(row.attempts),
                badge: row.unread.map { Int($0) },
                urgency: row.urgency,
                collapseID: row.collapseID,
                seal: seal(kind: kind, platform: platform, previewJSON: row.preview, publicKey: row.sealPublic, authSecret: row.sealAuth)
            )
            deliveries.append(ClaimedDelivery(id: row.id, push: push, deviceActive: row.active, user: row.userID, traceParent: row.traceParent))
        }
        deliveries.sort { $0.push.priority > $1.push.priority }
        return ClaimedBatch(leaseToken: token, deliveries: deliveries, rejected: rejected)
    }

    /// The seal of a claimed push: with the switch on, every notify push to a Web Push device (its subscription
    /// seals the message) or to a device with a sealing key, with or without a preview, so sizes do not tell.
    func seal(kind: PushKind, platform: Platform, previewJSON: String?, publicKey: ByteBuffer?, authSecret: ByteBuffer?) -> PushSeal? {
        guard sealedPreviews, case .notify = kind else { return nil }
        if platform.sealsItsOwnMessage { return PushSeal(previewJSON: previewJSON, key: nil) }
        guard let publicKey, let authSecret,
            let key = SealingPublicKey(publicKey: Data(publicKey.readableBytesView), authSecret: Data(authSecret.readableBytesView))
        else { return nil }
        return PushSeal(previewJSON: previewJSON, key: key)
    }

    public func complete(_ completions: [DeliveryCompletion], leaseToken: UUID) async throws -> Int {
        guard !completions.isEmpty else { return 0 }
        var ids: [UUID] = []
        var outcomes: [String] = []
        var delays: [Int64] = []
        var infos: [String] = []
        // How long ago each push was answered, so `accepted_at` is the answer's time on the database's clock.
        var answeredAgo: [Int64] = []
        let now = ContinuousClock.now
        for completion in completions {
            answeredAgo.append(completion.answeredAt.map { max(0, $0.duration(to: now).wholeMicroseconds) } ?? 0)
            ids.append(completion.deliveryID)
            outcomes.append(completion.outcome.kind.rawValue)
            if case .retry(let delay, _) = completion.outcome {
                delays.append(max(0, delay.wholeMilliseconds))
            } else {
                delays.append(0)
            }
            infos.append(completion.outcome.detail)
        }
        // securepush.complete_deliveries (sql/routines/complete_deliveries.sql): a retry goes back to pending, any
        // other outcome to the history.
        return try await database.count(
            """
            SELECT securepush.complete_deliveries(\(leaseToken), \(ids)::uuid[], \(outcomes)::text[], \(delays)::bigint[],
                                                  \(infos)::text[], \(answeredAgo)::bigint[])
            """
        )
    }

    public func release(_ deliveryIDs: [UUID], leaseToken: UUID, delay: Duration) async throws -> Int {
        guard !deliveryIDs.isEmpty else { return 0 }
        let delayMilliseconds = max(0, delay.wholeMilliseconds)
        // securepush.release_deliveries (sql/routines/release_deliveries.sql): delivery rows and lease items alike.
        return try await database.count(
            "SELECT securepush.release_deliveries(\(leaseToken), \(deliveryIDs)::uuid[], \(delayMilliseconds)::bigint)"
        )
    }

    /// With the gate on, one round trip: `securepush.await_sync_replication` waits server side until a
    /// synchronous standby flushed past the WAL position read now (after the claim). Off: true at once.
    public func awaitReplication(timeout: Duration) async throws -> Bool {
        guard replicationGate else { return true }
        let rows = try await database.query(
            "SELECT securepush.await_sync_replication(\(Int(timeout.wholeMilliseconds))::integer)"
        ).collect()
        return try rows.first?.decode(Bool.self) ?? false
    }
}
