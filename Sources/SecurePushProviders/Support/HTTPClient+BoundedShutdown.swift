import AsyncHTTPClient
import SecurePushCore

extension HTTPClient {
    /// Shuts the client down, waiting at most `grace`. AsyncHTTPClient's shutdown was seen to wait forever for a
    /// connection that the push service had closed after a burst of stream resets (its rapid-reset defence;
    /// `WebPushQuarantineTests` under ThreadSanitizer, every run): a process that stops, or a cache that retires a
    /// client, must not hang on it. Past `grace` the shutdown goes on without being awaited.
    public func shutdown(within grace: Duration) async {
        _ = try? await withDeadline(grace) { try await self.shutdown() }
    }
}
