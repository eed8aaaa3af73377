/// The seam to a push platform. Implementations receive only ids and device targets.
///
/// A provider must be safe to call concurrently: the dispatcher sends with bounded concurrency,
/// and HTTP/2 providers multiplex those sends onto shared connections.
public protocol PushProvider: Sendable {
    /// The platform this provider serves.
    var platform: Platform { get }

    /// Sends one push and classifies the outcome. Never throws: transport errors become `.retry`.
    func send(_ push: Push) async -> PushResult

    /// Sends several pushes; the default sends them one by one. Providers with a batch API override it.
    func send(batch: [Push]) async -> [PushResult]

    /// Releases connections and other resources.
    func shutdown() async
}

extension PushProvider {
    /// Sends the pushes one after another.
    public func send(batch: [Push]) async -> [PushResult] {
        var results: [PushResult] = []
        results.reserveCapacity(batch.count)
        for push in batch {
            results.append(await send(push))
        }
        return results
    }

    /// Nothing to release by default.
    public func shutdown() async {}
}
