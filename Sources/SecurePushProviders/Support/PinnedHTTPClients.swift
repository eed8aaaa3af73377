import AsyncHTTPClient
import NIOConcurrencyHelpers
import SecurePushCore

/// HTTP clients that connect a host name to one address that was checked, so DNS rebinding between the
/// check and the connect cannot redirect a push (`HTTPClient.Configuration.dnsOverride`: the connection
/// goes to the address while TLS still verifies, and sends SNI for, the host name).
///
/// One client per (host, address), and a second one for the pushes to addresses that failed lately
/// (`Push.quarantined`), so that their connection, not everybody's, is the one a push service closes when
/// their timed-out streams are reset too often. Built from one configuration on the shared event loop group, at
/// most `capacity` idle ones kept (least recently used evicted; a client in use is never shut down under its
/// request). The owner calls `shutdown()` once no provider sends any more.
public final class PinnedHTTPClients: Sendable {
    struct Key: Hashable {
        var host: String
        var address: IPAddress
        var quarantined: Bool
    }

    struct Entry {
        var client: HTTPClient
        var users: Int
        var lastUse: UInt64
    }

    struct State {
        var entries: [Key: Entry] = [:]
        var clock: UInt64 = 0
        /// Evicted clients being shut down, by eviction number; each removes itself when done.
        var retiring: [UInt64: Task<Void, Never>] = [:]
        var evictions: UInt64 = 0
        var isShutDown = false
    }

    /// The longest wait for one client's shutdown (`HTTPClient.shutdown(within:)`).
    static let shutdownGrace: Duration = .seconds(5)

    private let configuration: HTTPClient.Configuration
    private let capacity: Int
    private let state = NIOLockedValueBox(State())

    /// A cache of clients configured like `configuration` (its `dnsOverride` is replaced per client).
    public init(configuration: HTTPClient.Configuration, capacity: Int = 64) {
        self.configuration = configuration
        self.capacity = max(1, capacity)
    }

    /// How many clients exist now.
    public var count: Int { state.withLockedValue { $0.entries.count } }

    /// Runs `body` with a client whose connections to `host` go to `address`, apart from the others' when
    /// `quarantined`. `host` must be spelt as the request URL's `URL.host` is (the client's override is keyed by it).
    func withClient<T>(
        host: String, address: IPAddress, quarantined: Bool = false, _ body: (HTTPClient) async throws -> T
    ) async throws -> T {
        let key = Key(host: host, address: address, quarantined: quarantined)
        let client = try acquire(key)
        defer { release(key) }
        return try await body(client)
    }

    /// Shuts down every client (and waits for evicted ones). Later sends fail.
    public func shutdown() async {
        let (clients, retiring) = state.withLockedValue { state in
            state.isShutDown = true
            let clients = state.entries.values.map(\.client)
            state.entries = [:]
            return (clients, Array(state.retiring.values))
        }
        for client in clients { await client.shutdown(within: Self.shutdownGrace) }
        for task in retiring { await task.value }
    }

    private func acquire(_ key: Key) throws -> HTTPClient {
        try state.withLockedValue { state in
            guard !state.isShutDown else { throw HTTPClientError.alreadyShutdown }
            state.clock += 1
            if var entry = state.entries[key] {
                entry.users += 1
                entry.lastUse = state.clock
                state.entries[key] = entry
                return entry.client
            }
            var configuration = self.configuration
            configuration.dnsOverride = [key.host: key.address.description]
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            state.entries[key] = Entry(client: client, users: 1, lastUse: state.clock)
            evictIdle(&state)
            return client
        }
    }

    private func release(_ key: Key) {
        state.withLockedValue { state in
            state.entries[key]?.users -= 1
            evictIdle(&state)
        }
    }

    /// Shuts down the least recently used idle clients while there are more than `capacity`.
    private func evictIdle(_ state: inout State) {
        while state.entries.count > capacity {
            guard let (key, entry) = state.entries.filter({ $0.value.users == 0 }).min(by: { $0.value.lastUse < $1.value.lastUse }) else { return }
            state.entries[key] = nil
            let client = entry.client
            state.evictions += 1
            let number = state.evictions
            state.retiring[number] = Task {
                await client.shutdown(within: Self.shutdownGrace)
                self.state.withLockedValue { _ = $0.retiring.removeValue(forKey: number) }
            }
        }
    }
}
