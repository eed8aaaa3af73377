import Logging
import ServiceLifecycle
import UnixSignals

extension ServiceGroup {
    /// Runs `services` in one group until SIGTERM/SIGINT, each named by its type: the group logs each
    /// service's name, and a description could hold configuration (a database client's holds the password).
    static func runNamed(_ services: [any Service], logger: Logger) async throws {
        let group = ServiceGroup(
            configuration: .init(
                services: services.map { .init(service: $0, serviceName: String(describing: type(of: $0))) },
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        try await group.run()
    }
}
