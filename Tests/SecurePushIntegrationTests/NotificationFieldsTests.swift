import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import PostgresNIO
import SecurePushStore
import SecurePushTestSupport
import Testing

/// A read-API field is a column of the read functions, a property of `StoredNotification` and a key of
/// `NotificationJSON`: this test needs no change when a field is added, and fails until the field reaches
/// every answer that carries a notification, with the value the table holds.
@Suite("HTTP API: every read column reaches the answers")
struct NotificationFieldsTests {
    @Test("each column of StoredNotification is a key of the single fetch, the batch fetch and the listing with payloads, holding the stored value")
    func everyColumnReachesTheAnswers() async throws {
        try await APIHarness.withDatabase { db, api, client in
            let device = try await registerDevice(client, api, user: "fia", token: "fia-1")
            var answers: [[String: Any]] = []
            var ids: [UUID] = []
            for _ in 0..<3 {
                ids.append(
                    try await db.scalar(
                        """
                        INSERT INTO securepush.notifications (user_id, payload, category, preview)
                        VALUES ('fia', '{"n": [1, "two"]}', 'billing', '{"title": "Due"}') RETURNING id
                        """))
            }
            let single = try await client.execute(uri: "/v1/notifications/\(ids[0])", method: .get, headers: .bearer(device))
            #expect(single.status == .ok)
            answers.append(try object(single.body))
            let batch = try await client.execute(
                uri: "/v1/notifications/fetch", method: .post, headers: .bearer(device),
                body: ByteBuffer(string: #"{"ids": ["\#(ids[1])"]}"#))
            answers += try object(batch.body)["notifications"] as? [[String: Any]] ?? []
            let page = try await client.execute(uri: "/v1/notifications?include=payload&limit=1", method: .get, headers: .bearer(device))
            answers += try object(page.body)["notifications"] as? [[String: Any]] ?? []
            #expect(answers.count == 3, "one notification from each answer")
            for answer in answers {
                #expect(Set(answer.keys) == Set(StoredNotification.columns))
                let id = try #require(answer["id"] as? String)
                let storedText: String = try await db.scalar("SELECT to_jsonb(n)::text FROM securepush.notifications n WHERE id = \(id)::uuid")
                let stored = try object(ByteBuffer(string: storedText))
                for column in StoredNotification.columns {
                    #expect(
                        same(answer[column], stored[column]),
                        "\(column): answered \(String(describing: answer[column])), stored \(String(describing: stored[column]))")
                }
            }
        }
    }

    private func object(_ body: ByteBuffer) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any])
    }

    /// Equal JSON values; two times are equal to the millisecond the API writes.
    private func same(_ answered: Any?, _ stored: Any?) -> Bool {
        if let a = answered as? String, let s = stored as? String, let at = time(a), let st = time(s) {
            return abs(at.timeIntervalSince(st)) < 0.001
        }
        if answered is NSNull || answered == nil { return stored is NSNull || stored == nil }
        guard let answered, let stored else { return false }
        return canonical(answered) == canonical(stored)
    }

    private func canonical(_ value: Any) -> Data? {
        try? JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys, .fragmentsAllowed])
    }

    private func time(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text) ?? ISO8601DateFormatter().date(from: text)
    }
}
