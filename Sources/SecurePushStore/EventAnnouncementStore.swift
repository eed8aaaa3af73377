import Logging
import PostgresNIO
import SecurePushCore
import SecurePushPostgres

/// The outcome feed's wake-up (`securepush.announce_events`, migration 028): one NOTIFY on `securepush_events`
/// when the feed's head moved, so that the statements that write events carry none.
public struct EventAnnouncementStore: EventAnnouncements, Sendable {
    let database: StoreDatabase

    /// A store on `client`.
    public init(client: any DatabaseClient, logger: Logger) {
        self.database = StoreDatabase(client: client, logger: logger)
    }

    /// Notifies listeners when the feed's head is past `lastHead`; returns the head.
    public func announce(after lastHead: String?) async throws -> String? {
        let rows = try await database.query("SELECT securepush.announce_events(\(lastHead))").collect()
        return try rows.first?.decode(String?.self)
    }
}
