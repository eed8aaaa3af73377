import Crypto
import Foundation
import SecurePushCore
import SecurePushRelay
import SecurePushStore

/// The relay role's settings (`securepush serve --role relay`): its listener, the key of its token digests
/// and how many sends one installation may have in flight per relay process.
public struct RelayConfiguration: Sendable {
    /// The relay API's bind address (`SECUREPUSH_RELAY_HOST`, default 127.0.0.1).
    public var host: String
    /// The relay API's port (`SECUREPUSH_RELAY_PORT`, default 8090).
    public var port: Int
    /// The key of the token digests (`SECUREPUSH_RELAY_TOKEN_KEY_FILE`: at least 32 bytes; required).
    public var tokenKey: SymmetricKey?
    /// One installation's sends in flight per relay process (`SECUREPUSH_RELAY_INSTALLATION_CONCURRENCY`, default 64).
    public var perInstallation: Int
    /// Failed authentications per address and requests per installation (`SECUREPUSH_RELAY_AUTH_FAILURE_*`,
    /// `SECUREPUSH_RELAY_INSTALLATION_RATE`); trusted proxies and the body read timeout are the API's settings.
    public var limits: RelayLimits

    init(values: ConfigurationValues, required: Bool) throws {
        self.host = values.string("SECUREPUSH_RELAY_HOST") ?? "127.0.0.1"
        self.port = try values.int("SECUREPUSH_RELAY_PORT", default: 8090, in: 0...65535)
        self.perInstallation = try values.int("SECUREPUSH_RELAY_INSTALLATION_CONCURRENCY", default: 64, in: 1...10_000)
        var limits = RelayLimits()
        limits.authFailures = RateLimit(
            perSecond: Double(
                try values.int("SECUREPUSH_RELAY_AUTH_FAILURE_RATE_PER_MINUTE", default: Int(limits.authFailures.perSecond * 60), in: 1...100_000))
                / 60,
            burst: try values.int("SECUREPUSH_RELAY_AUTH_FAILURE_BURST", default: limits.authFailures.burst, in: 1...100_000))
        let rate = try values.int("SECUREPUSH_RELAY_INSTALLATION_RATE", default: Int(limits.installationRequests.perSecond), in: 1...1_000_000)
        limits.installationRequests = RateLimit(perSecond: Double(rate), burst: rate)
        self.limits = limits
        if let path = values.string("SECUREPUSH_RELAY_TOKEN_KEY_FILE") {
            guard let bytes = FileManager.default.contents(atPath: path) else {
                throw ConfigurationError("SECUREPUSH_RELAY_TOKEN_KEY_FILE: cannot read \(path)")
            }
            guard bytes.count >= 32 else {
                throw ConfigurationError("SECUREPUSH_RELAY_TOKEN_KEY_FILE must hold at least 32 bytes (for example: head -c 32 /dev/urandom > FILE)")
            }
            self.tokenKey = SymmetricKey(data: bytes)
        } else if required {
            throw ConfigurationError(
                "the relay role needs SECUREPUSH_RELAY_TOKEN_KEY_FILE: a file of at least 32 random bytes, the key of the token digests it stores")
        }
    }
}
