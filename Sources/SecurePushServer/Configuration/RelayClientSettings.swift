import Foundation
import SecurePushCore
import SecurePushRelayProtocol
import SecurePushStore

/// A self-hosted server's settings for pushing through a vendor's relay (docs/relay.md): `relay` in
/// `SECUREPUSH_PROVIDERS` sends the platforms of `SECUREPUSH_RELAY_PLATFORMS` (default `apns,fcm,wns`)
/// through the relay at `SECUREPUSH_RELAY_URL` as installation `SECUREPUSH_RELAY_INSTALLATION_ID` with the
/// key in `SECUREPUSH_RELAY_KEY_FILE`; the other platforms listed go direct (`relay,webpush`: Web Push
/// with this server's own VAPID key, the rest through the relay).
public struct RelayClientSettings: Sendable {
    /// The relayed platforms.
    public var platforms: [Platform]
    /// The relay's base URL: `https://...`, or `http://` on a loopback host only.
    public var url: String
    public var installation: UUID
    public var key: InstallationKey
    /// A relay request's deadline (`SECUREPUSH_RELAY_TIMEOUT`, default 10 s).
    public var timeout: Duration

    init(values: ConfigurationValues, direct: [Platform]) throws {
        let names = values.string("SECUREPUSH_RELAY_PLATFORMS") ?? "apns,fcm,wns"
        var platforms: [Platform] = []
        for name in SecurePushConfiguration.listNames(names) {
            guard let platform = Platform(rawValue: name), RelayPush.relayedPlatforms.contains(platform) else {
                throw ConfigurationError("SECUREPUSH_RELAY_PLATFORMS lists \(name); a relay pushes apns, fcm and wns (Web Push needs no relay)")
            }
            guard !direct.contains(platform) else {
                throw ConfigurationError(
                    "SECUREPUSH_PROVIDERS lists \(name) both directly and through the relay (SECUREPUSH_RELAY_PLATFORMS); choose one")
            }
            if !platforms.contains(platform) { platforms.append(platform) }
        }
        guard !platforms.isEmpty else { throw ConfigurationError("SECUREPUSH_RELAY_PLATFORMS lists no platform") }
        self.platforms = platforms
        guard let url = values.string("SECUREPUSH_RELAY_URL"), let components = URLComponents(string: url), let host = components.host else {
            throw ConfigurationError("SECUREPUSH_PROVIDERS lists relay: set SECUREPUSH_RELAY_URL to the relay's https URL")
        }
        let loopback = ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host.lowercased())
        guard components.scheme == "https" || (components.scheme == "http" && loopback) else {
            throw ConfigurationError("SECUREPUSH_RELAY_URL must be https (plain http only to a relay on this machine's loopback)")
        }
        self.url = url
        guard let id = values.string("SECUREPUSH_RELAY_INSTALLATION_ID").flatMap({ UUID(canonical: Array($0.utf8)[...]) }) else {
            throw ConfigurationError("SECUREPUSH_PROVIDERS lists relay: set SECUREPUSH_RELAY_INSTALLATION_ID to the id the relay's operator gave you")
        }
        self.installation = id
        guard let path = values.string("SECUREPUSH_RELAY_KEY_FILE") else {
            throw ConfigurationError("SECUREPUSH_PROVIDERS lists relay: set SECUREPUSH_RELAY_KEY_FILE to the file holding the installation's key")
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ConfigurationError("SECUREPUSH_RELAY_KEY_FILE: cannot read \(path)")
        }
        do {
            self.key = try InstallationKey(text: text)
        } catch {
            throw ConfigurationError("SECUREPUSH_RELAY_KEY_FILE: \(error)")
        }
        self.timeout = try values.duration("SECUREPUSH_RELAY_TIMEOUT", default: .seconds(10), in: .milliseconds(100)...(.seconds(120)))
    }
}
