import Hummingbird
import HummingbirdCore
import Logging
import SecurePushAPI
import SecurePushCore

/// A listener with the HTTP limits every public listener has (`APILimits`): the connection guard
/// (`ConnectionGuard`: connections per address, request-head deadline), the idle timeout, header size limits
/// and the most connections at once. The API's listeners and the relay's use it.
enum GuardedApplication {
    /// The application serving `router` on `address`.
    static func make<Context: RequestContext>(router: Router<Context>, address: BindAddress, limits: APILimits, logger: Logger)
        -> some ApplicationProtocol
    where Context.Source == ApplicationRequestContextSource {
        let decoder = HTTP1Channel.Configuration.DecoderConfiguration(
            maxHeaderFieldSize: limits.maxHeaderBytes, maxHeaderListSize: limits.maxHeaderBytes, maxHeaderFieldCount: 100)
        let channel = HTTP1Channel.Configuration(idleTimeout: .milliseconds(limits.idleTimeout.wholeMilliseconds), httpDecoderConfiguration: decoder)
        let connectionLimits = ConnectionLimits(
            perAddress: limits.maxConnectionsPerAddress, headerTimeout: limits.headerTimeout, trustedProxies: limits.trustedProxies)
        return Application(
            router: router,
            server: HTTPServerBuilder { responder in
                GuardedHTTP1Channel(inner: HTTP1Channel(responder: responder, configuration: channel), limits: connectionLimits)
            },
            configuration: .init(
                address: address, serverName: nil, availableConnectionsDelegate: MaximumAvailableConnections(limits.maxConnections, logger: logger)),
            logger: logger
        )
    }
}
