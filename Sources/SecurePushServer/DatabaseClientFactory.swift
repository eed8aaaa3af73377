import Logging
import PostgresNIO
import SecurePushStore

extension DatabaseURL {
    /// A pooled client with `poolSize` connections at most. Run it (`client.run()`) before use.
    public func makeClient(poolSize: Int, logger: Logger) -> PostgresClient {
        var configuration = clientConfiguration()
        configuration.options.maximumConnections = poolSize
        configuration.options.minimumConnections = 0
        return PostgresClient(configuration: configuration, backgroundLogger: logger)
    }
}
