import Logging
import PostgresNIO
import SecurePushStore

extension DatabaseURL {
    /// A pooled client with `poolSize` connections at most. Run it (`client.run()`) before use.
    ///
    /// `synchronousCommit: false` is for the dispatcher's own bookkeeping (claims and outcomes): a database
    /// crash can then undo its last fraction of a second, which resends a few pushes but never loses one.
    ///
    /// A `fixed` pool opens all of them and keeps them without
    /// keep-alive pings: for the busy pools of `serve` (API requests, dispatcher lanes). PostgresNIO's
    /// pool arms an idle or keep-alive timer each time a connection goes back and cancels it on the next
    /// lease, and a cancelled timer (a sleeping task) keeps its memory until its original deadline: at
    /// thousands of requests a second the API grew by tens of megabytes. A connection the server dropped
    /// is found on its next use and replaced (that request answers 503 or its caller retries).
    public func makeClient(poolSize: Int, logger: Logger, synchronousCommit: Bool = true, fixed: Bool = false) -> PostgresClient {
        var configuration = clientConfiguration()
        configuration.options.maximumConnections = poolSize
        configuration.options.minimumConnections = fixed ? poolSize : 0
        if fixed {
            configuration.options.keepAliveBehavior = nil
        }
        if !synchronousCommit {
            configuration.options.additionalStartupParameters.append(("synchronous_commit", "off"))
        }
        return PostgresClient(configuration: configuration, backgroundLogger: logger)
    }
}
