/// The outcome webhook's seam to the database: the next batch of outcome events after the webhook's cursor,
/// handed to one process at a time, and the cursor moved only after the receiver took the batch.
public protocol WebhookFeed: Sendable {
    /// Takes the next at most `limit` events after the cursor, runs `deliver` with them and moves the cursor
    /// past them once it returns; a `deliver` that throws leaves the cursor where it was. Returns how many were
    /// delivered (0 when there were none or another process holds the webhook).
    func deliverNext(limit: Int, _ deliver: @Sendable ([OutcomeEvent]) async throws -> Void) async throws -> Int
    /// Records that a batch was refused or could not be sent (`reason`: a status code or an error's type, never a body).
    func recordFailure(_ reason: String) async throws
}
