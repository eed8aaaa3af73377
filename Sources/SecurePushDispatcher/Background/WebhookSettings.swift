import Foundation
import SecurePushCore

/// The outcome webhook (`SECUREPUSH_WEBHOOK_URL`, docs/operations.md § Outcome webhook): where the
/// dispatchers post each batch of outcome events, signed with `SECUREPUSH_WEBHOOK_SECRET` (read from the
/// environment by the server's configuration).
public struct WebhookSettings: Sendable {
    /// The receiver: `https://...`, or `http://` to a receiver on this machine's loopback only.
    public var url: String
    /// The signer (Standard Webhooks).
    public var signature: WebhookSignature
    /// Events per request (`SECUREPUSH_WEBHOOK_BATCH`, default 100).
    public var batch: Int
    /// A request's deadline (`SECUREPUSH_WEBHOOK_TIMEOUT`, default 10 s).
    public var timeout: Duration
    /// The longest wait between two tries of a refused batch (`SECUREPUSH_WEBHOOK_RETRY_MAX`, default 5 min);
    /// the first retry comes after 1 s, each next one waits twice as long.
    public var retryMax: Duration

    /// Settings for the receiver at `url`, which must be `https`, or `http` to this machine's loopback.
    public init(url: String, signature: WebhookSignature, batch: Int, timeout: Duration, retryMax: Duration) throws {
        try Self.check(url: url)
        self.url = url
        self.signature = signature
        self.batch = batch
        self.timeout = timeout
        self.retryMax = retryMax
    }

    /// Throws unless `url` is `https`, or `http` to this machine's loopback.
    public static func check(url: String) throws {
        guard let components = URLComponents(string: url), let host = components.host, !host.isEmpty else {
            throw ConfigurationError("SECUREPUSH_WEBHOOK_URL is not a URL")
        }
        let loopback = ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host.lowercased())
        guard components.scheme == "https" || (components.scheme == "http" && loopback) else {
            throw ConfigurationError("SECUREPUSH_WEBHOOK_URL must be https (plain http only to a receiver on this machine's loopback)")
        }
    }

    /// The receiver's host, the only part of the URL that is logged (a URL may carry a token).
    var host: String { URLComponents(string: url)?.host ?? "?" }
}
