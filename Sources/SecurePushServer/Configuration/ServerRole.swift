/// Which parts a `securepush serve` process runs.
public enum ServerRole: String, Sendable, CaseIterable {
    /// The HTTP API only.
    case api
    /// The dispatcher only.
    case dispatcher
    /// Both.
    case all
    /// The push relay (docs/relay.md): the vendor's APNs, FCM and WNS credentials, serving installations
    /// (self-hosted servers) on its own listener, with its own database. Nothing else.
    case relay

    /// Whether this role runs the dispatcher.
    public var runsDispatcher: Bool { self == .dispatcher || self == .all }
    /// Whether this role serves the API's routes (the API and dispatcher roles serve the operations routes).
    public var runsAPI: Bool { self == .api || self == .all }
}
