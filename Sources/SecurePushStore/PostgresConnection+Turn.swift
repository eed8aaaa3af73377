import Logging
import PostgresNIO

extension PostgresConnection {
    /// Takes the turn of `queue` (`securepush.take_turn`: `webhook`, `relay_outbox`) for this transaction if no
    /// other holds it (false otherwise): one process at a time works through the queue in order. The turn is a
    /// table lock no producer may take; it assigns no transaction id, so the holder holds back no reader of
    /// `events_after` while it waits for a receiver.
    func takeTurn(_ queue: String, logger: Logger) async throws -> Bool {
        try await query("SELECT securepush.take_turn(\(queue))", logger: logger).collect().first?.decode(Bool.self) ?? false
    }
}
