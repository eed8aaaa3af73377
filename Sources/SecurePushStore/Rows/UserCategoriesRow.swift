import Foundation
import PostgresNIO
import SecurePushPostgres

/// A row of `securepush.user_categories` (`sql/routines/user_categories.sql`).
public struct UserCategoriesRow: FunctionRow {
    public static let function = "securepush.user_categories(text)"
    public static let columns = ["category", "muted", "latest_at"]

    public var category: String
    public var muted: Bool
    public var latestAt: Date?

    public init(_ row: NamedRow) throws {
        category = try row("category")
        muted = try row("muted")
        latestAt = try row("latest_at")
    }
}
