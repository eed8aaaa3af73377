import Logging
import PostgresNIO
import SecurePushStore

extension DatabaseURL {
    /// A pooled client with `poolSize` connections at most. Run it (`client.run()`) before use.
    ///
    /// `synchronousCommit: false` is for the dispatcher's own bookkeeping (claims and outcomes): a database
    /// crash can then undo its last fraction of a second, which resends a few pushes but never loses one.
    public func makeClient(poolSize: Int, logger: Logger, synchronousCommit: Bool = true) -> PostgresClient {
        var configuration = clientConfiguration()
        configuration.options.maximumConnections = poolSize
        configuration.options.minimumConnections = 0
        if !synchronousCommit {
            configuration.options.additionalStartupParameters.append(("synchronous_commit", "off"))
        }
        return PostgresClient(configuration: configuration, backgroundLogger: logger)
    }
}
