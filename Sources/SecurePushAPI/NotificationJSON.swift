import Foundation
import SecurePushCore
import SecurePushStore

/// Response bodies that carry payloads. A payload is JSON text from PostgreSQL (`jsonb::text`, always
/// valid JSON), spliced in as is instead of being parsed and re-encoded; every other value is written
/// with the API's conventions (sorted keys, lowercase ids, ISO 8601 times with milliseconds).
enum NotificationJSON {
    /// `{"category", "created_at", "id", "payload", "preview", "read_at"}`: one notification with its payload
    /// (`null` in a listing without payloads). The one home of a notification's keys in a response.
    static func notification(_ notification: StoredNotification, into body: inout String) {
        body += #"{"category":"#
        body += notification.category.map(quoted) ?? "null"
        body += #","created_at":"#
        body += quoted(APITimestamp.string(notification.createdAt))
        body += #","id":"#
        body += quoted(notification.id.uuidString.lowercased())
        body += #","payload":"#
        body += notification.payloadJSON ?? "null"
        body += #","preview":"#
        body += notification.previewJSON ?? "null"
        body += #","read_at":"#
        body += notification.readAt.map { quoted(APITimestamp.string($0)) } ?? "null"
        body += "}"
    }

    /// `GET /v1/notifications/{id}`'s body.
    static func single(_ notification: StoredNotification) -> [UInt8] {
        var body = ""
        Self.notification(notification, into: &body)
        return Array(body.utf8)
    }

    /// `GET /v1/notifications?include=payload`'s body: the page with payloads and the next cursor.
    static func page(_ items: some Collection<NotificationSummary>, nextCursor: String?) -> [UInt8] {
        var body = #"{"next_cursor":"#
        body += nextCursor.map(quoted) ?? "null"
        body += #","notifications":["#
        for (index, item) in items.enumerated() {
            if index > 0 { body += "," }
            notification(item.notification, into: &body)
        }
        body += "]}"
        return Array(body.utf8)
    }

    /// `POST /v1/notifications/fetch`'s body: the payloads found and the ids missing, each in request order.
    /// `not_found` (unknown or another user's) and `gone` (expired or purged) entries have the same shape.
    static func batch(_ results: [FetchedNotification]) -> [UInt8] {
        var found = ""
        var missing = ""
        for entry in results {
            switch entry.result {
            case .found(let notification):
                if !found.isEmpty { found += "," }
                Self.notification(notification, into: &found)
            case .gone, .notFound:
                if !missing.isEmpty { missing += "," }
                let reason = if case .gone = entry.result { "gone" } else { "not_found" }
                missing += #"{"id":"# + quoted(entry.id.uuidString.lowercased()) + #","reason":"# + quoted(reason) + "}"
            }
        }
        return Array(#"{"missing":[\#(missing)],"notifications":[\#(found)]}"#.utf8)
    }

    /// A JSON string of text that needs no escaping (timestamps, ids, cursors, reason codes).
    private static func quoted(_ text: String) -> String {
        "\"\(text)\""
    }
}
