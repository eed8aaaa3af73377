import Hummingbird
import NIOCore
import SecurePushCore
import SecurePushStore

/// The request context of the API's routes: what the authentication middleware established.
public struct APIRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The device credential the request carried, not yet checked (set by `DeviceCredentialMiddleware`).
    public var proof: DeviceProof?
    /// The read tokens taken when the request was admitted (set by `DeviceCredentialMiddleware`).
    var readCharge: ReadCharge?
    /// The device whose credential was checked (set by `DeviceCheckMiddleware`).
    public var device: AuthenticatedDevice?
    /// The user whose token the request carried (set by `UserAuthenticationMiddleware`).
    public var userID: String?

    /// The connection's peer address.
    public let remoteAddress: SocketAddress?

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
    }

    /// The client's address: the peer, or the forwarded client when the peer is a trusted proxy.
    func clientAddress(_ request: Request, trustedProxies: TrustedProxies) -> String {
        ClientAddress.resolve(peer: remoteAddress?.ipAddress, forwardedFor: request.headers[.xForwardedFor], trustedProxies: trustedProxies)
    }

    /// The authenticated device; a route outside the device group is a programming error answered as 401.
    func requireDevice() throws -> AuthenticatedDevice {
        guard let device else { throw APIError.unauthorized("A device credential is required.") }
        return device
    }

    /// The unchecked device credential; a route outside the device group is a programming error answered as 401.
    func requireProof() throws -> DeviceProof {
        guard let proof else { throw APIError.unauthorized("A device credential is required.") }
        return proof
    }

    /// The authenticated user; a route outside the user group is a programming error answered as 401.
    func requireUser() throws -> String {
        guard let userID else { throw APIError.unauthorized("A user token is required.") }
        return userID
    }
}
