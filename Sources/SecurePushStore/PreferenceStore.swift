import Foundation
import Logging
import PostgresNIO
import SecurePushPostgres

/// A user's daily quiet window: local times in an IANA time zone; `start > end` spans midnight.
public struct QuietHours: Sendable, Hashable {
    /// The IANA time zone name, e.g. `Europe/Berlin`.
    public var timeZone: String
    /// When the window starts, `HH:MM` local time.
    public var start: String
    /// When it ends, `HH:MM` local time (exclusive).
    public var end: String

    /// Creates quiet hours.
    public init(timeZone: String, start: String, end: String) {
        self.timeZone = timeZone
        self.start = start
        self.end = end
    }
}

/// A category a user has or muted.
public struct CategoryState: Sendable, Hashable {
    /// The producer's category name.
    public var name: String
    /// Whether the user muted it (its notifications are stored and listed, never pushed).
    public var muted: Bool
    /// The newest delivered, live notification of this category, if any.
    public var latestAt: Date?

    /// Creates the state.
    public init(name: String, muted: Bool, latestAt: Date?) {
        self.name = name
        self.muted = muted
        self.latestAt = latestAt
    }
}

/// What a user chose about their notifications: quiet hours and muted categories
/// (`sql/016_delivery_controls.sql`). Invalid input throws `InvalidInput` with the database's sentence.
public struct PreferenceStore: Sendable {
    let database: StoreDatabase

    /// Creates the store on an injected client.
    public init(client: any DatabaseClient, logger: Logger) {
        self.database = StoreDatabase(client: client, logger: logger)
    }

    /// The user's quiet hours, if set.
    public func quietHours(userID: String) async throws -> QuietHours? {
        let rows = try await database.query(
            """
            SELECT time_zone, to_char(starts, 'HH24:MI'), to_char(ends, 'HH24:MI')
            FROM securepush.quiet_hours WHERE user_id = \(userID)
            """
        ).collect()
        guard let row = rows.first else { return nil }
        let (zone, start, end) = try row.decode((String, String, String).self)
        return QuietHours(timeZone: zone, start: start, end: end)
    }

    /// Sets the user's quiet hours; pushes already waiting are re-timed. Throws `HourlyLimitReached` past the
    /// user's hourly number of quiet-hours changes.
    public func setQuietHours(userID: String, _ hours: QuietHours) async throws {
        try await HourlyLimitReached.mapped {
            try await invalidInputAsError {
                try await database.execute(
                    "SELECT securepush.set_quiet_hours(\(userID), \(hours.timeZone), \(hours.start)::time, \(hours.end)::time)")
            }
        }
    }

    /// Removes the user's quiet hours; returns whether there were any. Throws `HourlyLimitReached` past the
    /// user's hourly number of quiet-hours changes.
    public func clearQuietHours(userID: String) async throws -> Bool {
        try await HourlyLimitReached.mapped {
            let rows = try await database.query("SELECT securepush.clear_quiet_hours(\(userID))").collect()
            return try rows.first?.decode(Bool.self) ?? false
        }
    }

    /// The user's categories (of delivered, live notifications, and muted ones), by name.
    public func categories(userID: String) async throws -> [CategoryState] {
        let rows = try await database.query("SELECT * FROM securepush.user_categories(\(userID))")
        var result: [CategoryState] = []
        for try await postgresRow in rows {
            let row = try UserCategoriesRow(row: postgresRow)
            result.append(CategoryState(name: row.category, muted: row.muted, latestAt: row.latestAt))
        }
        return result
    }

    /// Mutes or unmutes a category; returns how many waiting pushes muting cancelled.
    @discardableResult
    public func setMuted(userID: String, category: String, muted: Bool) async throws -> Int {
        try await invalidInputAsError {
            let rows = try await database.query("SELECT securepush.set_category_muted(\(userID), \(category), \(muted))").collect()
            return Int(try rows.first?.decode(Int32.self) ?? 0)
        }
    }
}
