import AsyncHTTPClient
import Logging
import SecurePushCore

/// The SSRF guard of the providers whose URLs come from devices (Web Push, WNS): checks a URL against the
/// policy, resolves its host itself, refuses it when any address is not public (unless allowed), and hands
/// the request a client that connects to the address it checked.
public struct EndpointGuard: Sendable {
    /// What a send may do with a URL.
    enum Route: Sendable {
        /// Send through this client to this host (`address` is the one checked).
        case pinned(host: String, address: IPAddress)
        /// The host is an IP literal (`address`, spelt `host` in the URL) that passed the policy: any client
        /// connects to it without DNS.
        case direct(host: String, address: IPAddress)
    }

    let policy: PushEndpointPolicy
    let resolver: any HostResolver
    let clients: PinnedHTTPClients
    let resolveTimeout: Duration

    /// A guard for `policy`. `clients` are owned by the caller, who shuts them down after the providers stopped.
    public init(
        policy: PushEndpointPolicy, resolver: any HostResolver = SystemHostResolver(), clients: PinnedHTTPClients,
        resolveTimeout: Duration = .seconds(5)
    ) {
        self.policy = policy
        self.resolver = resolver
        self.clients = clients
        self.resolveTimeout = resolveTimeout
    }

    /// Checks `url` without resolving it. A refusal is the device's permanent failure:
    /// `.tokenInvalid("<label> refused: <why>")`.
    func check(_ url: String, label: String) -> Result<PushEndpoint, PushResultError> {
        do {
            return .success(try policy.check(url))
        } catch {
            return .failure(PushResultError(result: .tokenInvalid(reason: "\(label) refused: \(error.reason)")))
        }
    }

    /// Resolves `endpoint`'s host and checks every address. Any non-public address (not allowed) refuses
    /// the device; a failed lookup is retried later.
    func route(_ endpoint: PushEndpoint, label: String, logger: Logger) async -> Result<Route, PushResultError> {
        if let address = endpoint.address { return .success(.direct(host: endpoint.urlHost, address: address)) }
        let host = endpoint.urlHost
        let resolver = self.resolver
        let addresses: [IPAddress]
        do {
            addresses = try await withDeadline(resolveTimeout) { try await resolver.addresses(of: host) }
        } catch {
            logger.warning("push host could not be resolved", metadata: ["push.error": "\(String(describing: type(of: error)))"])
            // The device's failure, not the push service's: the breaker is shared by every endpoint under the
            // service's allowed host, and a device can register a name under it that does not resolve. Counted
            // against the service, one such device paused everybody's pushes. Retried, spending its attempts.
            return .failure(PushResultError(result: .retry(after: nil, reason: "\(label) host could not be resolved", scope: .device)))
        }
        guard !addresses.isEmpty else {
            return .failure(PushResultError(result: .retry(after: nil, reason: "\(label) host has no address", scope: .device)))
        }
        for address in addresses {
            do {
                try policy.check(address: address, host: endpoint.host)
            } catch {
                return .failure(PushResultError(result: .tokenInvalid(reason: "\(label) refused: \(error.reason)")))
            }
        }
        // IPv4 first: hosts without IPv6 connectivity are still common, and one address is pinned.
        let chosen = addresses.first(where: \.isIPv4) ?? addresses[0]
        return .success(.pinned(host: host, address: chosen))
    }

    /// Runs `body` with the client for `route`: `direct` for an IP literal, else a client pinned to the checked
    /// address; a `quarantined` push (its address failed lately) always goes through a client of its own.
    func withClient<T>(_ route: Route, quarantined: Bool, direct: HTTPClient, _ body: (HTTPClient) async throws -> T) async throws -> T {
        switch route {
        case .direct where !quarantined:
            return try await body(direct)
        case .direct(let host, let address), .pinned(let host, let address):
            return try await clients.withClient(host: host, address: address, quarantined: quarantined, body)
        }
    }
}

/// A push result carried as an error, so guard steps compose with `Result`.
struct PushResultError: Error {
    var result: PushResult
}
