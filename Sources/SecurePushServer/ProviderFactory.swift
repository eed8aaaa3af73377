import Foundation
import Logging
import SecurePushCore
import SecurePushProviders
import SecurePushStore

/// Builds the push providers a configuration enables.
public enum ProviderFactory {
    /// One provider per configured platform; a platform that cannot be served yet is a start-up error.
    public static func makeProviders(_ configuration: SecurePushConfiguration, logger: Logger) throws -> [any PushProvider] {
        try configuration.providers.map { platform -> any PushProvider in
            switch platform {
            case .simulated:
                let outbox = try SimulatedOutbox(path: configuration.simulatedOutboxPath)
                return SimulatedProvider(outbox: outbox, latency: configuration.simulatedLatency)
            case .apns, .fcm, .wns, .webpush:
                throw ConfigurationError(
                    "SECUREPUSH_PROVIDERS lists \(platform.rawValue), which has no credentials configured in this build; its deliveries wait")
            }
        }
    }
}
