import Foundation
import Logging
import PostgresNIO
import SecurePushCore
import SecurePushPostgres

/// A notification as its owner's device reads it: the item columns that the read functions
/// (`sql/routines/device_fetch_requests.sql`, `device_list_page.sql`) return under these names. A field of the
/// read API is a column there, a property here and a key in `NotificationJSON`.
public struct StoredNotification: Sendable {
    /// The columns read, by name.
    public static let columns = ["id", "payload", "created_at", "read_at", "category", "preview"]

    /// The id.
    public var id: UUID
    /// The payload as JSON text; `nil` only in a listing without payloads.
    public var payloadJSON: String?
    /// When it was enqueued.
    public var createdAt: Date
    /// When it was first read.
    public var readAt: Date?
    /// The producer's category, if any (never pushed; returned so apps can group).
    public var category: String?
    /// The producer-approved preview as JSON text (an object), if any: pushed only sealed
    /// (`SECUREPUSH_SEALED_PREVIEWS`), always returned to the owner.
    public var previewJSON: String?
}

extension StoredNotification {
    /// The notification in `row`, or `nil` when the row carries none (its `id` or `created_at` is NULL: a
    /// session row, or a requested id that was not found).
    init?(_ row: NamedRow) throws {
        guard let id = try row("id", as: UUID?.self), let createdAt = try row("created_at", as: Date?.self) else { return nil }
        self.id = id
        self.createdAt = createdAt
        payloadJSON = try row("payload")
        readAt = try row("read_at")
        category = try row("category")
        previewJSON = try row("preview")
    }
}

/// What reading a notification found.
public enum ReadResult: Sendable {
    /// The payload, now marked read.
    case found(StoredNotification)
    /// It exists for this user but expired or its payload was purged.
    case gone
    /// Unknown, or another user's: the two are indistinguishable.
    case notFound
}

/// One entry of the unread/catch-up listing: the notification (with its payload when the listing included
/// payloads) and where a listing continues after it.
public struct NotificationSummary: Sendable {
    /// The notification.
    public var notification: StoredNotification
    /// Where a listing continues after this item.
    public var cursor: ListCursor
}

/// A position in the newest-first listing.
public struct ListCursor: Sendable, Hashable {
    /// Creation time in microseconds since 1970 of the last item returned.
    public var createdAtMicros: Int64
    /// The id of the last item returned.
    public var id: UUID

    /// Creates a cursor.
    public init(createdAtMicros: Int64, id: UUID) {
        self.createdAtMicros = createdAtMicros
        self.id = id
    }
}

/// Reads notifications for their owner's devices.
public struct NotificationStore: PayloadRetention, Sendable {
    let database: StoreDatabase
    let reads: ReadBatcher

    /// Creates the store on an injected client; at most `readStatements` device fetches run at once,
    /// and the fetches that arrive meanwhile share the next statements (`ReadBatcher`).
    public init(client: any DatabaseClient, logger: Logger, readStatements: Int = NotificationStore.defaultReadStatements) {
        self.database = StoreDatabase(client: client, logger: logger)
        self.reads = ReadBatcher(statements: readStatements)
    }

    /// Fetch statements at once by default: two, so one statement waiting on a row lock does not hold up
    /// every read, and few enough that a storm's fetches gather into large statements. On a database
    /// that shares its 2 cores with the API (ops/bench), one does best.
    public static let defaultReadStatements = 2

    /// Purges payloads of expired notifications and, when `afterRead` is set, of notifications read that long ago.
    public func purgePayloads(afterRead: Duration?) async throws -> Int {
        let milliseconds = afterRead?.wholeMilliseconds
        let rows = try await database.query(
            "SELECT securepush.purge_payloads(\(milliseconds)::bigint * interval '1 millisecond')"
        ).collect()
        return Int(try rows.first?.decode(Int32.self) ?? 0)
    }
}
