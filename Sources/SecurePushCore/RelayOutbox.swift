/// The seam to the queue of registration changes waiting for the push relay (`securepush.relay_outbox`).
public protocol RelayOutbox: Sendable {
    /// Takes the oldest `limit` changes, one process at a time (so changes reach the relay in order), runs
    /// `deliver` with them and removes them once it returns; a `deliver` that throws leaves them queued. Returns
    /// how many were delivered (0 when another process holds the queue).
    func drain(limit: Int, _ deliver: @Sendable ([RelayRegistrationChange]) async throws -> Void) async throws -> Int
}
