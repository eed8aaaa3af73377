/// The seam to a push platform. Implementations receive only ids and device targets.
///
/// A provider must be safe to call concurrently: the dispatcher sends with bounded concurrency,
/// and HTTP/2 providers multiplex those sends onto shared connections. Providers own no connections:
/// the HTTP client they use is created and shut down by the server that owns it.
public protocol PushProvider: Sendable {
    /// The platform this provider serves.
    var platform: Platform { get }

    /// Sends one push and classifies the outcome. Never throws: transport errors become `.retry`.
    func send(_ push: Push) async -> PushResult
}
