import PostgresNIO
import SecurePushPostgres

/// A row of `securepush.fetch_stats` (`sql/routines/fetch_stats.sql`): one platform's pushes and fetches.
public struct FetchStatsRow: FunctionRow {
    public static let function = "securepush.fetch_stats(interval)"
    public static let columns = ["platform", "accepted", "fetched", "fetch_ratio", "push_to_fetch_p50_seconds", "push_to_fetch_p99_seconds"]

    public var platform: String
    public var accepted: Int64
    public var fetched: Int64
    public var fetchRatio: Double
    public var pushToFetchP50Seconds: Double?
    public var pushToFetchP99Seconds: Double?

    public init(_ row: NamedRow) throws {
        platform = try row("platform")
        accepted = try row("accepted")
        fetched = try row("fetched")
        fetchRatio = try row("fetch_ratio")
        pushToFetchP50Seconds = try row("push_to_fetch_p50_seconds")
        pushToFetchP99Seconds = try row("push_to_fetch_p99_seconds")
    }
}
