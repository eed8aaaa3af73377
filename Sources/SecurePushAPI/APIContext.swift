import Foundation
import Logging
import SecurePushCore
import SecurePushStore

/// Everything the HTTP handlers use, injected once.
public struct APIContext: Sendable {
    /// Devices and credentials.
    public var devices: DeviceStore
    /// Notification reads and listings.
    public var notifications: NotificationStore
    /// The status report.
    public var status: StatusStore
    /// The app's user-token verifier.
    public var userTokens: UserTokenVerifier
    /// Names of migrations not yet applied (for `/readyz` and `/status`).
    public var pendingMigrations: @Sendable () async throws -> [String]
    /// Prometheus text for `/metrics`.
    public var metricsText: @Sendable () -> String
    /// Largest accepted request body.
    public var maxRequestBodyBytes: Int = 16 * 1024
    /// The longest one database call of a request may take (then the request answers 503).
    public var databaseTimeout: Duration = .seconds(10)

    /// Runs a database call under `databaseTimeout`: a query on a connection that died mid-flight
    /// must fail the request, not hang it.
    func database<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withDeadline(databaseTimeout, operation)
    }

    /// Creates a context.
    public init(
        devices: DeviceStore,
        notifications: NotificationStore,
        status: StatusStore,
        userTokens: UserTokenVerifier,
        pendingMigrations: @escaping @Sendable () async throws -> [String],
        metricsText: @escaping @Sendable () -> String
    ) {
        self.devices = devices
        self.notifications = notifications
        self.status = status
        self.userTokens = userTokens
        self.pendingMigrations = pendingMigrations
        self.metricsText = metricsText
    }
}
