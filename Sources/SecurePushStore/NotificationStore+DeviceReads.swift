import Foundation
import PostgresNIO
import SecurePushPostgres

/// One requested id and what fetching it found.
public struct FetchedNotification: Sendable {
    /// The id as requested.
    public var id: UUID
    /// The payload (now fetched by the device and read), `gone` or `notFound`.
    public var result: ReadResult
    /// The producer's W3C traceparent of a notification found, if it gave one (the fetch's span links it).
    public var traceParent: String? = nil
}

/// Device reads: each is one call of one SQL function (`sql/routines/device_list_page.sql`,
/// `device_fetch_requests.sql`) that checks the
/// credential and the throttle, records that the device was seen, and reads, in one round trip.
extension NotificationStore {
    /// Returns the payloads of the device user's notifications among `ids`, in the order given (give each
    /// id once), and records in the same statement the first read (`read_at`, `read_by_device`) of each and
    /// this device's first fetch (`securepush.fetches`). Another user's notification is `notFound`, exactly
    /// like an unknown id, and is not touched. Fetches that arrive together share one statement
    /// (`ReadBatcher`); rows are locked in one index walk, so concurrent fetches of overlapping sets cannot
    /// deadlock.
    public func fetch(ids: [UUID], as proof: DeviceProof) async throws -> DeviceAccess<[FetchedNotification]> {
        try await reads.fetch(ReadBatcher.Request(proof: proof, ids: ids)) { [database] requests in
            try await Self.fetch(requests, database: database)
        }
    }

    /// One call of `securepush.device_fetch_requests` for `requests`: one access per request, in their order.
    /// The statement waits at most 500 ms for a notification another transaction holds (a producer's cancel
    /// left open); then, having written nothing, it runs again skipping what is held, which it answers as it
    /// stands and leaves unmarked, so one producer's transaction never holds the other devices of the batch.
    static func fetch(_ requests: [ReadBatcher.Request], database: StoreDatabase) async throws -> [DeviceAccess<[FetchedNotification]>] {
        do {
            return try await fetch(requests, database: database, skipHeld: false)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == SQLState.lockNotAvailable {
            return try await fetch(requests, database: database, skipHeld: true)
        }
    }

    static func fetch(
        _ requests: [ReadBatcher.Request], database: StoreDatabase, skipHeld: Bool
    ) async throws -> [DeviceAccess<[FetchedNotification]>] {
        var keys: [String] = []
        var keyRequests: [Int32] = []
        var idRequests: [Int32] = []
        var ids: [UUID] = []
        for (index, request) in requests.enumerated() {
            keys += request.proof.throttleKeys
            keyRequests += Array(repeating: Int32(index + 1), count: request.proof.throttleKeys.count)
            ids += request.ids
            idRequests += Array(repeating: Int32(index + 1), count: request.ids.count)
        }
        let rows = try await database.query(
            """
            SELECT * FROM securepush.device_fetch_requests(\(requests.map(\.proof.deviceID))::uuid[], \(requests.map(\.proof.secretHashBuffer))::bytea[],
                                                  \(keys)::text[], \(keyRequests)::integer[], \(idRequests)::integer[], \(ids)::uuid[],
                                                  \(skipHeld))
            """
        )
        var sessions = [DeviceSessionRow](repeating: .missing, count: requests.count)
        var found = [[UUID: ReadResult]](repeating: [:], count: requests.count)
        var traced = [[UUID: String]](repeating: [:], count: requests.count)
        for try await postgresRow in rows {
            let row = try DeviceFetchRequestsRow(row: postgresRow)
            let index = Int(row.request) - 1
            guard requests.indices.contains(index) else { continue }
            sessions[index] = row.session
            guard let id = row.id else { continue }
            found[index][id] = row.notification.map(ReadResult.found) ?? (row.owned ? .gone : .notFound)
            traced[index][id] = row.traceParent
        }
        return requests.enumerated().map { index, request in
            sessions[index].access(
                deviceID: request.proof.deviceID,
                request.ids.map { FetchedNotification(id: $0, result: found[index][$0] ?? .notFound, traceParent: traced[index][$0]) })
        }
    }

    /// The device user's unexpired notifications (only unread ones when asked), newest first, after
    /// `cursor`: at most `limit + 1` items, so the caller knows whether a next page exists. With
    /// `payloads`, the first `limit` items are fetched by this device and marked read in the same statement
    /// (as `fetch` does) and carry their payloads; the extra item has none; an item whose payload was
    /// purged while the page was being read is left out.
    public func list(
        as proof: DeviceProof, unreadOnly: Bool, limit: Int, after cursor: ListCursor?, payloads: Bool
    ) async throws -> DeviceAccess<[NotificationSummary]> {
        let afterMicros = cursor?.createdAtMicros ?? 0
        let afterID = cursor?.id
        let rows = try await database.query(
            """
            SELECT * FROM securepush.device_list_page(\(proof.deviceID), \(proof.secretHashBuffer), \(proof.throttleKeys)::text[], \(unreadOnly),
                                             \(Int32(limit)), \(afterMicros), \(afterID)::uuid, \(payloads))
            """
        )
        var session = DeviceSessionRow.missing
        var items: [NotificationSummary] = []
        for try await postgresRow in rows {
            let row = try DeviceListPageRow(row: postgresRow)
            session = row.session
            if let item = row.item { items.append(item) }
        }
        return session.access(deviceID: proof.deviceID, items)
    }
}
