import Foundation
import SecurePushCore
import SecurePushReports
import SecurePushStore

// The report's three views share these: `/status`'s JSON, its HTML page (`StatusPage`) and the CLI table (`StatusTable`).

extension StatusReport {
    /// The JSON encoder used for the report (snake_case keys, dates as `APITimestamp` writes them, as `/v1` does).
    public static var jsonEncoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = APITimestamp.encodingStrategy
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}

extension StatusReport {
    /// A dispatcher's LISTEN connection in a few words, for the page and the CLI table: `connected, heard
    /// 1.2 s ago`, `down, heard 40.0 s ago`, or `not reported`.
    public static func listenerSummary(_ dispatcher: Dispatcher, now: Date) -> String {
        guard let connected = dispatcher.listenerConnected else { return "not reported" }
        let heard = dispatcher.listenerHeardAt.map { String(format: ", heard %.1f s ago", now.timeIntervalSince($0)) } ?? ""
        return (connected ? "connected" : "down") + heard
    }
}

extension StatusReport {
    /// The last hour's security events that happened (count above zero), by name: what the page and the CLI
    /// table list (the JSON keeps every kind, zeros included).
    public var securityEventsThatHappened: [(event: String, count: Int64)] {
        securityEventsLastHour.filter { $0.value != 0 }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}

extension StatusReport.Window {
    /// The six outcomes with their labels, in the views' order (`sent`, `failed`, `token invalid`, ...).
    public var labelledCounts: [(label: String, count: Int64)] {
        [
            ("sent", sent), ("failed", failed), ("token invalid", tokenInvalid), ("expired", expired), ("cancelled", cancelled),
            ("superseded", superseded),
        ]
    }
}
