import Hummingbird
import NIOCore

/// A relay request's context: Hummingbird's, and the connection's peer (the failed-authentication throttle
/// keys on the client address, `RelayGate`).
public struct RelayRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The connection's peer address.
    public let remoteAddress: SocketAddress?

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
    }
}
