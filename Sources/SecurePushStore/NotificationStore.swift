import Foundation
import Logging
import PostgresNIO
import SecurePushCore

/// A notification as its owner's device reads it.
public struct StoredNotification: Sendable {
    /// The id.
    public var id: UUID
    /// The payload as JSON text.
    public var payloadJSON: String
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

/// What reading a notification found.
public enum ReadResult: Sendable {
    /// The payload, now marked read.
    case found(StoredNotification)
    /// It exists for this user but expired or its payload was purged.
    case gone
    /// Unknown, or another user's: the two are indistinguishable.
    case notFound
}

/// One entry of the unread/catch-up listing.
public struct NotificationSummary: Sendable {
    /// The id.
    public var id: UUID
    /// When it was enqueued.
    public var createdAt: Date
    /// When it was first read, if it was.
    public var readAt: Date?
    /// Where a listing continues after this item.
    public var cursor: ListCursor
    /// The payload as JSON text, when the listing included payloads.
    public var payloadJSON: String?
    /// The producer's category, if any.
    public var category: String?
    /// The producer-approved preview as JSON text, if any.
    public var previewJSON: String?
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
public struct NotificationStore: Sendable {
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
