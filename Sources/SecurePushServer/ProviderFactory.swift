import AsyncHTTPClient
import Foundation
import Logging
import SecurePushCore
import SecurePushProviders
import SecurePushStore

/// Builds the push providers a configuration enables.
public enum ProviderFactory {
    /// A client configured the way the providers need it: HTTP/2 when the server offers it (ALPN), and
    /// never following redirects (Web Push and WNS URLs are device-supplied). The caller owns it and
    /// must shut it down (`SecurePushServer` does, after its services stopped).
    public static func makeHTTPClient() -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.httpVersion = .automatic
        configuration.timeout.connect = .seconds(10)
        configuration.connectionPool.idleTimeout = .seconds(600)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// One provider per configured platform, real ones using `httpClient` (which the caller owns).
    public static func makeProviders(_ configuration: SecurePushConfiguration, httpClient: HTTPClient?, logger: Logger) throws -> [any PushProvider] {
        let settings = configuration.providerSettings
        return try configuration.providers.map { platform -> any PushProvider in
            func client() throws -> HTTPClient {
                guard let httpClient else {
                    throw ConfigurationError("SECUREPUSH_PROVIDERS lists \(platform.rawValue), but no HTTP client was given")
                }
                return httpClient
            }
            func missing() -> ConfigurationError {
                ConfigurationError("SECUREPUSH_PROVIDERS lists \(platform.rawValue), but its settings were not read")
            }
            do {
                switch platform {
                case .simulated:
                    let outbox = try SimulatedOutbox(path: configuration.simulatedOutboxPath)
                    return SimulatedProvider(outbox: outbox, latency: configuration.simulatedLatency)
                case .apns:
                    guard let apns = settings.apns else { throw missing() }
                    return try APNsProvider(configuration: apns, httpClient: try client(), logger: logger)
                case .fcm:
                    guard let fcm = settings.fcm else { throw missing() }
                    return try FCMProvider(configuration: fcm, httpClient: try client(), logger: logger)
                case .webpush:
                    guard let webPush = settings.webPush else { throw missing() }
                    return try WebPushProvider(configuration: webPush, httpClient: try client(), logger: logger)
                case .wns:
                    guard let wns = settings.wns else { throw missing() }
                    return try WNSProvider(configuration: wns, httpClient: try client(), logger: logger)
                }
            } catch let error as ConfigurationError {
                throw error
            } catch let error as SimulatedOutboxError {
                throw error
            } catch {
                throw ConfigurationError("\(platform.rawValue) provider cannot start: \(error)")
            }
        }
    }
}
