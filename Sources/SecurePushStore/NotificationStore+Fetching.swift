import Foundation
import PostgresNIO

/// One requested id and what fetching it found.
public struct FetchedNotification: Sendable {
    /// The id as requested.
    public var id: UUID
    /// The payload (now fetched by the device and read), `gone` or `notFound`.
    public var result: ReadResult
}

extension NotificationStore {
    /// Returns the payloads of the user's notifications among `ids`, in the order given (give each id once),
    /// and records in the same statement the first read (`read_at`, `read_by_device`) of each and this
    /// device's first fetch (`securepush.fetches`). Another user's notification is `notFound`, exactly
    /// like an unknown id, and is not touched.
    ///
    /// The rows are locked in id order, so concurrent fetches of overlapping sets cannot deadlock, and a
    /// fetch that waited for a concurrent first read returns that read's `read_at`.
    public func fetch(ids: [UUID], userID: String, deviceID: UUID) async throws -> [FetchedNotification] {
        guard !ids.isEmpty else { return [] }
        let rows = try await database.query(
            """
            WITH wanted AS (
                SELECT w.id, w.ord FROM unnest(\(ids)::uuid[]) WITH ORDINALITY AS w(id, ord)
            ),
            locked AS (
                SELECT n.id, n.payload::text AS payload, n.created_at, n.read_at,
                       (n.expires_at > now() AND n.purged_at IS NULL) AS live
                FROM securepush.notifications n
                WHERE n.id IN (SELECT id FROM wanted) AND n.user_id = \(userID)
                ORDER BY n.id
                FOR NO KEY UPDATE
            ),
            marked AS (
                UPDATE securepush.notifications n SET read_at = now(), read_by_device = \(deviceID)
                FROM locked l
                WHERE n.id = l.id AND l.live AND l.read_at IS NULL
                RETURNING n.id, n.read_at
            ),
            fetched AS (
                INSERT INTO securepush.fetches (notification_id, device_id)
                SELECT id, \(deviceID) FROM locked WHERE live
                ON CONFLICT (notification_id, device_id) DO NOTHING
            )
            SELECT w.id, l.id IS NOT NULL, coalesce(l.live, false), CASE WHEN l.live THEN l.payload END, l.created_at,
                   coalesce(m.read_at, l.read_at)
            FROM wanted w
            LEFT JOIN locked l ON l.id = w.id
            LEFT JOIN marked m ON m.id = w.id
            ORDER BY w.ord
            """
        )
        var results: [FetchedNotification] = []
        results.reserveCapacity(ids.count)
        for try await (id, owned, live, payload, createdAt, readAt) in rows.decode((UUID, Bool, Bool, String?, Date?, Date?).self) {
            let result: ReadResult
            if let payload, let createdAt, live {
                result = .found(StoredNotification(id: id, payloadJSON: payload, createdAt: createdAt, readAt: readAt))
            } else {
                result = owned ? .gone : .notFound
            }
            results.append(FetchedNotification(id: id, result: result))
        }
        return results
    }

    /// Returns the payload and marks it read atomically (see `fetch(ids:userID:deviceID:)`).
    public func read(id: UUID, userID: String, deviceID: UUID) async throws -> ReadResult {
        try await fetch(ids: [id], userID: userID, deviceID: deviceID).first?.result ?? .notFound
    }

    /// The listing of `list(userID:unreadOnly:limit:after:)` with payloads: the first `limit` items are
    /// fetched by this device and marked read in the same statement (as `fetch` does); one item more is
    /// returned without a payload, unmarked, so the caller knows whether a next page exists. An item whose
    /// payload was purged while the page was being read is left out.
    public func listFetching(
        userID: String, deviceID: UUID, unreadOnly: Bool, limit: Int, after cursor: ListCursor?
    ) async throws -> [NotificationSummary] {
        let hasCursor = cursor != nil
        let afterMicros = cursor?.createdAtMicros ?? 0
        let afterID = cursor?.id ?? UUID()
        let rows = try await database.query(
            """
            WITH page AS (
                SELECT id, created_at, read_at, (extract(epoch FROM created_at) * 1000000)::bigint AS micros,
                       row_number() OVER (ORDER BY created_at DESC, id DESC) AS position
                FROM (
                    SELECT id, created_at, read_at
                    FROM securepush.notifications
                    WHERE user_id = \(userID) AND expires_at > now() AND purged_at IS NULL
                      AND (NOT \(unreadOnly) OR read_at IS NULL)
                      AND (NOT \(hasCursor) OR (created_at, id) < ('epoch'::timestamptz + \(afterMicros) * interval '1 microsecond', \(afterID)))
                    ORDER BY created_at DESC, id DESC
                    LIMIT \(limit + 1)
                ) newest
            ),
            locked AS (
                SELECT n.id, n.payload::text AS payload, n.created_at, n.read_at,
                       (n.expires_at > now() AND n.purged_at IS NULL) AS live
                FROM securepush.notifications n
                WHERE n.id IN (SELECT id FROM page WHERE position <= \(limit)) AND n.user_id = \(userID)
                ORDER BY n.id
                FOR NO KEY UPDATE
            ),
            marked AS (
                UPDATE securepush.notifications n SET read_at = now(), read_by_device = \(deviceID)
                FROM locked l
                WHERE n.id = l.id AND l.live AND l.read_at IS NULL
                RETURNING n.id, n.read_at
            ),
            fetched AS (
                INSERT INTO securepush.fetches (notification_id, device_id)
                SELECT id, \(deviceID) FROM locked WHERE live
                ON CONFLICT (notification_id, device_id) DO NOTHING
            )
            SELECT p.id, p.created_at, coalesce(m.read_at, l.read_at, p.read_at), p.micros, CASE WHEN l.live THEN l.payload END
            FROM page p
            LEFT JOIN locked l ON l.id = p.id
            LEFT JOIN marked m ON m.id = p.id
            WHERE p.position > \(limit) OR l.live
            ORDER BY p.position
            """
        )
        var items: [NotificationSummary] = []
        for try await (id, createdAt, readAt, micros, payload) in rows.decode((UUID, Date, Date?, Int64, String?).self) {
            var item = NotificationSummary(id: id, createdAt: createdAt, readAt: readAt, cursor: ListCursor(createdAtMicros: micros, id: id))
            item.payloadJSON = payload
            items.append(item)
        }
        return items
    }
}
