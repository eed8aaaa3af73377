/// The seam to the payloads' retention: payloads are erased once they may no longer be read.
public protocol PayloadRetention: Sendable {
    /// Purges the payloads of expired notifications and, when `afterRead` is set, of notifications read that
    /// long ago; returns how many were purged.
    func purgePayloads(afterRead: Duration?) async throws -> Int
}
