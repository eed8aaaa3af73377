/// Which parts a `securepush serve` process runs.
public enum ServerRole: String, Sendable, CaseIterable {
    /// The HTTP API only.
    case api
    /// The dispatcher only.
    case dispatcher
    /// Both.
    case all

    /// Whether this role runs the dispatcher.
    public var runsDispatcher: Bool { self != .api }
    /// Whether this role serves the API's routes (every role serves the operations routes).
    public var runsAPI: Bool { self != .dispatcher }
}
