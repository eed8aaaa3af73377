import Foundation
import SecurePushCore
import SecurePushStore

/// The outcome webhook (`SECUREPUSH_WEBHOOK_URL`, docs/operations.md § Outcome webhook): where the
/// dispatchers post each batch of outcome events, signed with `SECUREPUSH_WEBHOOK_SECRET`.
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

    /// The settings, or `nil` when `SECUREPUSH_WEBHOOK_URL` is not set.
    init?(values: ConfigurationValues) throws {
        guard let url = values.string("SECUREPUSH_WEBHOOK_URL") else {
            if values.string("SECUREPUSH_WEBHOOK_SECRET") != nil {
                throw ConfigurationError("SECUREPUSH_WEBHOOK_SECRET is set but SECUREPUSH_WEBHOOK_URL is not")
            }
            return nil
        }
        guard let components = URLComponents(string: url), let host = components.host, !host.isEmpty else {
            throw ConfigurationError("SECUREPUSH_WEBHOOK_URL is not a URL")
        }
        let loopback = ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host.lowercased())
        guard components.scheme == "https" || (components.scheme == "http" && loopback) else {
            throw ConfigurationError("SECUREPUSH_WEBHOOK_URL must be https (plain http only to a receiver on this machine's loopback)")
        }
        guard let secret = values.string("SECUREPUSH_WEBHOOK_SECRET") else {
            throw ConfigurationError("SECUREPUSH_WEBHOOK_URL is set: set SECUREPUSH_WEBHOOK_SECRET too (whsec_ and base64), so receivers can verify")
        }
        self.url = url
        self.signature = try WebhookSignature(secret: secret)
        self.batch = try values.int("SECUREPUSH_WEBHOOK_BATCH", default: 100, in: 1...1000)
        self.timeout = try values.duration("SECUREPUSH_WEBHOOK_TIMEOUT", default: .seconds(10), in: .milliseconds(100)...(.seconds(120)))
        self.retryMax = try values.duration("SECUREPUSH_WEBHOOK_RETRY_MAX", default: .seconds(300), in: .seconds(1)...(.seconds(3600)))
    }

    /// The receiver's host, the only part of the URL that is logged (a URL may carry a token).
    var host: String { URLComponents(string: url)?.host ?? "?" }
}
