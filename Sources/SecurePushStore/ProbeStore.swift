import Foundation
import Logging
import PostgresNIO
import SecurePushCore
import SecurePushPostgres

/// One device's progress in a probe (`securepush probe`), from `securepush.notification_status`.
public struct ProbeDeviceStatus: Sendable, Equatable {
    /// The device.
    public var deviceID: UUID
    /// Its platform.
    public var platform: String
    /// Queued, held by a dispatcher, finished, or never pushed.
    public var state: ProbeState
    /// How the delivery ended, once finished.
    public var outcome: DeliveryOutcome.Kind?
    /// Attempts so far.
    public var attempts: Int
    /// The last error of a failed or retried attempt (never a payload or token).
    public var lastError: String?
    /// Time from enqueueing to the platform's acceptance.
    public var acceptedAfter: Duration?
    /// Time from enqueueing to this device's first fetch.
    public var fetchedAfter: Duration?

    /// Whether nothing more can happen to this device: fetched, or finished without being accepted.
    public var isSettled: Bool {
        fetchedAfter != nil || (state == .finished && outcome != .sent)
    }
}

/// Enqueues probe notifications and reads their progress.
public struct ProbeStore: Sendable {
    let database: StoreDatabase

    /// The payload's marker: apps that see `"securepush_probe": true` may show or hide the notification.
    public static let marker = "securepush_probe"

    /// Creates the store on an injected client.
    public init(client: any DatabaseClient, logger: Logger) {
        self.database = StoreDatabase(client: client, logger: logger)
    }

    /// Enqueues a probe for `userID` that expires after `ttl` and returns its id. It is pushed to the
    /// user's active devices (its deliveries exist as soon as this returns).
    public func enqueue(userID: String, ttl: Duration) async throws -> UUID {
        let milliseconds = ttl.wholeMilliseconds
        let rows = try await database.query(
            """
            SELECT securepush.enqueue(
                user_id => \(userID),
                payload => jsonb_build_object(
                    'securepush_probe', true,
                    'title', 'SecurePush probe',
                    'body', 'An end-to-end test sent by an operator; apps may hide it.',
                    'sent_at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
                ttl => \(milliseconds) * interval '1 millisecond'
            )
            """
        ).collect()
        return try rows[0].decode(UUID.self)
    }

    /// Each device's progress for the probe `id`, ordered by platform and device.
    public func status(of id: UUID) async throws -> [ProbeDeviceStatus] {
        let rows = try await database.query(
            """
            SELECT device_id, coalesce(platform, ''), state, outcome, attempts, last_error,
                   (extract(epoch FROM accepted_at - created_at) * 1000000)::bigint,
                   (extract(epoch FROM fetched_at - created_at) * 1000000)::bigint
            FROM securepush.notification_status
            WHERE notification_id = \(id)
            ORDER BY platform, device_id
            """
        )
        var devices: [ProbeDeviceStatus] = []
        for try await (device, platform, state, outcome, attempts, lastError, accepted, fetched) in rows.decode(
            (UUID, String, ProbeState, DeliveryOutcome.Kind?, Int32, String?, Int64?, Int64?).self
        ) {
            devices.append(
                ProbeDeviceStatus(
                    deviceID: device, platform: platform, state: state, outcome: outcome, attempts: Int(attempts), lastError: lastError,
                    acceptedAfter: accepted.map { .microseconds(max(0, $0)) }, fetchedAfter: fetched.map { .microseconds(max(0, $0)) }))
        }
        return devices
    }
}
