import Foundation
import Logging
import PostgresNIO
import SecurePushCore
import SecurePushPostgres

/// The outcome webhook's side of the database (`securepush.webhook_state`, migration 028): the next batch of
/// outcome events after the webhook's cursor, handed over by one process at a time (`securepush.take_turn`: a
/// table lock no producer may take, held by a transaction that writes nothing until the receiver has answered,
/// so it holds back no reader of `events_after`), and the cursor moved only after the receiver took the batch.
public struct WebhookStore: WebhookFeed, Sendable {
    let client: any DatabaseClient
    let logger: Logger

    /// A store on `client`.
    public init(client: any DatabaseClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Takes the next at most `limit` events after the cursor (a first run starts at `events_head()`: from
    /// now on), runs `deliver` with them, and moves the cursor past them once it returns; a `deliver` that
    /// throws leaves the cursor where it was. Returns how many were delivered (0 when there were none or
    /// another process holds the webhook).
    public func deliverNext(limit: Int, _ deliver: @Sendable ([OutcomeEvent]) async throws -> Void) async throws -> Int {
        try await client.leased { connection in
            try await connection.inTransaction(logger: logger) {
                guard try await connection.takeTurn("webhook", logger: logger) else { return 0 }
                let stored =
                    try await connection.query("SELECT cursor FROM securepush.webhook_state WHERE id = 1", logger: logger)
                    .collect().first?.decode(String.self)
                var cursor = stored ?? "0:0"
                if stored == nil {
                    cursor =
                        try await connection.query("SELECT securepush.events_head()", logger: logger).collect().first?.decode(String.self) ?? cursor
                }
                let rows = try await connection.query(
                    "SELECT * FROM securepush.events_after(\(cursor), \(Int32(clamping: limit)))", logger: logger)
                var events: [OutcomeEvent] = []
                for try await row in rows { events.append(try EventsAfterRow(row: row).event) }
                guard let last = events.last?.cursor else {
                    // A first run pins "from now on", so a receiver added later is not sent the retained history.
                    if stored == nil {
                        _ = try await connection.query(
                            "INSERT INTO securepush.webhook_state (id, cursor) VALUES (1, \(cursor)) ON CONFLICT (id) DO NOTHING", logger: logger)
                    }
                    return 0
                }
                try await deliver(events)
                _ = try await connection.query(
                    """
                    INSERT INTO securepush.webhook_state AS s (id, cursor, delivered, last_success_at) VALUES (1, \(last), \(Int64(events.count)), now())
                    ON CONFLICT (id) DO UPDATE
                    SET cursor = excluded.cursor, delivered = s.delivered + excluded.delivered, failures = 0, last_error = NULL,
                        last_success_at = now(), updated_at = now()
                    """, logger: logger)
                return events.count
            }
        }
    }

    /// Records that a batch was refused or could not be sent (`reason`: a status code or an error's type, never a body).
    public func recordFailure(_ reason: String) async throws {
        _ = try await client.run(
            """
            UPDATE securepush.webhook_state SET failures = failures + 1, last_error = \(String(reason.prefix(200))), updated_at = now()
            WHERE id = 1
            """, logger: logger
        ).collect()
    }
}
