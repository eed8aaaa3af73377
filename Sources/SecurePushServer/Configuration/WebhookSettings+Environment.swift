import SecurePushCore
import SecurePushDispatcher

extension WebhookSettings {
    /// The settings from the environment, or `nil` when `SECUREPUSH_WEBHOOK_URL` is not set.
    init?(values: ConfigurationValues) throws {
        guard let url = values.string("SECUREPUSH_WEBHOOK_URL") else {
            if values.string("SECUREPUSH_WEBHOOK_SECRET") != nil {
                throw ConfigurationError("SECUREPUSH_WEBHOOK_SECRET is set but SECUREPUSH_WEBHOOK_URL is not")
            }
            return nil
        }
        // The URL's checks come first: a wrong URL is named before a missing secret.
        try WebhookSettings.check(url: url)
        guard let secret = values.string("SECUREPUSH_WEBHOOK_SECRET") else {
            throw ConfigurationError("SECUREPUSH_WEBHOOK_URL is set: set SECUREPUSH_WEBHOOK_SECRET too (whsec_ and base64), so receivers can verify")
        }
        try self.init(
            url: url,
            signature: try WebhookSignature(secret: secret),
            batch: try values.int("SECUREPUSH_WEBHOOK_BATCH", default: 100, in: 1...1000),
            timeout: try values.duration("SECUREPUSH_WEBHOOK_TIMEOUT", default: .seconds(10), in: .milliseconds(100)...(.seconds(120))),
            retryMax: try values.duration("SECUREPUSH_WEBHOOK_RETRY_MAX", default: .seconds(300), in: .seconds(1)...(.seconds(3600)))
        )
    }
}
