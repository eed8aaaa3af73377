import Foundation
import PostgresNIO
import SecurePushCore
import SecurePushPostgres

/// A row of `securepush.events_after` (`sql/routines/events_after.sql`): one outcome event.
public struct EventsAfterRow: FunctionRow {
    public static let function = "securepush.events_after(text, integer)"
    public static let columns = ["cursor", "at", "notification_id", "device_id", "platform", "event", "detail"]

    public var event: OutcomeEvent

    public init(_ row: NamedRow) throws {
        let word: String = try row("event")
        guard let kind = DeliveryEventKind(rawValue: word) else { throw UnknownEventWord(word: word) }
        event = OutcomeEvent(
            cursor: try row("cursor"), at: try row("at"), notificationID: try row("notification_id"), deviceID: try row("device_id"),
            platform: try row("platform"), event: kind, detail: try row("detail"))
    }

    /// An event word this build does not know (a newer migration added it).
    public struct UnknownEventWord: Error, CustomStringConvertible {
        public var word: String
        public var description: String { "securepush.events_after returned the unknown event word \(word)" }
    }
}
