import Foundation
import Logging
import Metrics
import SecurePushCore
import SecurePushPostgres
import SecurePushStore

/// Everything the HTTP handlers use, injected once.
///
/// The stores are reachable only through `database(_:)`, which bounds every call by `databaseTimeout`:
/// a route cannot forget the deadline.
public struct APIContext: Sendable {
    private let stores: APIStores
    /// The app's user-token verifier.
    public var userTokens: UserTokenVerifier
    /// Prometheus text for `/metrics`.
    public var metricsText: @Sendable () -> String
    /// Abuse and HTTP limits.
    public var limits = APILimits()
    /// The longest one database call of a request may take (then the request answers 503 `unavailable`).
    public var databaseTimeout: Duration = .seconds(10)
    /// Which Web Push endpoints and WNS channel URIs a device may register (checked without DNS; the
    /// dispatcher checks the resolved addresses at send time).
    public var endpointPolicies = PushEndpointPolicies()
    /// The VAPID public key browsers subscribe with (uncompressed P-256 point, base64url), when Web Push
    /// is configured (`SECUREPUSH_WEBPUSH_VAPID_KEY_FILE`); served at `GET /v1/webpush/key`.
    public var webPushPublicKey: String?
    /// Origins whose Web apps may call the `/v1/` routes from the browser (`SECUREPUSH_CORS_ORIGINS`; none by default).
    public var corsOrigins: Set<String> = []
    /// Whether `/demo/` serves the Web kit's demo page (`SECUREPUSH_DEMO=on`).
    public var demo = false
    /// The operations token the support lookup requires (`SECUREPUSH_OPS_TOKEN`); `nil`: no lookup routes.
    public var opsToken: String?
    /// Push tokens moved from one user to another by a registration (`securepush_device_rebinds_total`).
    let rebinds = Counter(label: "securepush_device_rebinds_total")

    /// Creates a context.
    public init(stores: APIStores, userTokens: UserTokenVerifier, metricsText: @escaping @Sendable () -> String) {
        self.stores = stores
        self.userTokens = userTokens
        self.metricsText = metricsText
    }

    /// Whether the support lookup's store is wired.
    var hasSupport: Bool { stores.support != nil }

    /// Runs a database call under `databaseTimeout`: a query on a connection that died mid-flight, a lock
    /// held elsewhere or an exhausted pool must fail the request (503), not hang it.
    func database<T: Sendable>(_ operation: @escaping @Sendable (APIStores) async throws -> T) async throws -> T {
        let stores = self.stores
        return try await withDeadline(databaseTimeout) { try await operation(stores) }
    }
}

/// The database access the API's handlers have: each store through its protocol (`DeviceRepository`, ...),
/// so a test of HTTP behaviour can give the handlers stores without a database.
public struct APIStores: Sendable {
    /// Devices and credentials.
    public var devices: any DeviceRepository
    /// Notification reads and listings.
    public var notifications: any NotificationRepository
    /// Quiet hours and muted categories.
    public var preferences: any PreferenceRepository
    /// The status report.
    public var status: any StatusRepository
    /// Failed-authentication throttling and the audit log.
    public var security: any SecurityRepository
    /// The support lookup's reads (`nil`: none).
    public var support: (any SupportRepository)?
    /// Names of migrations not yet applied (for `/readyz` and `/status`).
    public var pendingMigrations: @Sendable () async throws -> [String]
    /// What `/readyz` checks, on one connection: the migrations not yet applied and the server's role.
    public var readiness: @Sendable () async throws -> (pending: [String], role: ServerRole)

    /// Creates the stores.
    public init(
        devices: any DeviceRepository,
        notifications: any NotificationRepository,
        preferences: any PreferenceRepository,
        status: any StatusRepository,
        security: any SecurityRepository,
        pendingMigrations: @escaping @Sendable () async throws -> [String],
        readiness: @escaping @Sendable () async throws -> (pending: [String], role: ServerRole)
    ) {
        self.devices = devices
        self.notifications = notifications
        self.preferences = preferences
        self.status = status
        self.security = security
        self.pendingMigrations = pendingMigrations
        self.readiness = readiness
    }
}
