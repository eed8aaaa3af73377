import Logging
import PostgresNIO
import SecurePushCore
import SecurePushPostgres
import SecurePushStore

extension DatabaseURL {
    /// A pooled client with `poolSize` connections at most. Run it (`client.run()`) before use.
    ///
    /// `synchronousCommit: false` is for the dispatcher's own bookkeeping (claims and outcomes): a database
    /// crash can then undo its last fraction of a second, which resends a few pushes but never loses one.
    ///
    /// A `busy` pool (the API's requests, the dispatcher's lanes) closes a connection idle for 5 s and
    /// sends no keep-alive pings. PostgresNIO's pool arms an idle (and a keep-alive) timer each time a
    /// connection goes back and cancels it on the next lease, and a cancelled timer (a sleeping task)
    /// keeps its memory until its original deadline: with the defaults (60 s idle, 30 s keep-alive) the
    /// API grew by tens of megabytes at thousands of requests a second; 10 s bounds that to a few. The
    /// minimum stays 0: a pool whose minimum equals its maximum trapped in PostgresNIO's state machine
    /// (`createNewDemandConnectionIfPossible`) when connections were killed while all slots were taken.
    ///
    /// `statementTimeout` makes the server end any statement of the pool that runs longer (PostgreSQL's
    /// `statement_timeout`): the API's pool gets its request deadline, so a statement whose request was
    /// answered 503 at the deadline does not go on holding a connection and locks (PostgresNIO has no
    /// query cancellation).
    public func makeClient(
        poolSize: Int, logger: Logger, synchronousCommit: Bool = true, busy: Bool = false, statementTimeout: Duration? = nil,
        endpoint: DatabaseURL.Endpoint? = nil
    ) -> PostgresClient {
        var configuration = clientConfiguration(endpoint: endpoint)
        configuration.options.maximumConnections = poolSize
        configuration.options.minimumConnections = 0
        if busy {
            configuration.options.connectionIdleTimeout = .seconds(5)
            configuration.options.keepAliveBehavior = nil
        }
        if !synchronousCommit {
            configuration.options.additionalStartupParameters.append(("synchronous_commit", "off"))
        }
        if let statementTimeout {
            configuration.options.additionalStartupParameters.append(("statement_timeout", "\(max(1, statementTimeout.wholeMilliseconds))"))
        }
        return PostgresClient(configuration: configuration, backgroundLogger: logger)
    }

    /// A pool that follows the writable primary among the URL's hosts (`PrimaryRouter`), with the pool
    /// settings of `makeClient`. Run it (it is a `Service`) before use.
    public func makeRouter(
        poolSize: Int, logger: Logger, synchronousCommit: Bool = true, busy: Bool = false, statementTimeout: Duration? = nil
    ) -> PrimaryRouter {
        PrimaryRouter(connector: DatabaseConnector(url: self), logger: logger) { endpoint in
            makeClient(
                poolSize: poolSize, logger: logger, synchronousCommit: synchronousCommit, busy: busy, statementTimeout: statementTimeout,
                endpoint: endpoint)
        }
    }
}
