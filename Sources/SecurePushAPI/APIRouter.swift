import Hummingbird

/// Builds the HTTP API's router. The cross-cutting rules live here: errors and metrics for every route,
/// user-token authentication for the user group, device-credential authentication for the device group.
public enum APIRouter {
    /// All routes, behind the error middleware and request metrics; without `operations`, the operations
    /// routes are left out (they are served on a listener of their own, and answer 404 here).
    public static func build(_ api: APIContext, operations includeOperations: Bool = true) -> Router<APIRequestContext> {
        let router = Router(context: APIRequestContext.self)
        if !api.corsOrigins.isEmpty { router.add(middleware: CORSMiddleware(origins: api.corsOrigins)) }
        // Metrics outside the error middleware: they count the status the client got (a database deadline
        // is a 503 there, but a 500 to a middleware that sees the raw error).
        router.add(middleware: RequestMetricsMiddleware())
        router.add(middleware: ErrorMiddleware())
        router.add(middleware: MethodNotAllowedMiddleware())
        let gate = DeviceGate(api: api)
        let preferences = PreferenceRoutes(api: api)
        let devices = DeviceRoutes(api: api)
        let notifications = NotificationRoutes(api: api, gate: gate)
        let operations = OperationsRoutes(api: api)

        router.group()
            .add(middleware: UserAuthenticationMiddleware(api: api))
            .post("/v1/devices", use: devices.register)
        router.group()
            .add(middleware: DeviceCredentialMiddleware(gate: gate))
            .add(middleware: DeviceCheckMiddleware(gate: gate))
            .delete("/v1/devices/current", use: devices.unregister)
            .post("/v1/devices/current/rotate", use: devices.rotate)
            .put("/v1/devices/current/token", use: devices.updateToken)
            .put("/v1/devices/current/sealing-key", use: devices.setSealingKey)
            .delete("/v1/devices/current/sealing-key", use: devices.clearSealingKey)
            .get("/v1/quiet-hours", use: preferences.quietHours)
            .put("/v1/quiet-hours", use: preferences.setQuietHours)
            .delete("/v1/quiet-hours", use: preferences.clearQuietHours)
            .get("/v1/categories", use: preferences.categories)
            .put("/v1/categories/:name", use: preferences.setCategory)
        // Reads check the credential in the same round trip as the read.
        router.group()
            .add(middleware: DeviceCredentialMiddleware(gate: gate))
            .get("/v1/notifications", use: notifications.list)
            .get("/v1/notifications/:id", use: notifications.read)
            .post("/v1/notifications/fetch", use: notifications.fetch)

        if includeOperations { mountOperations(router, operations) }
        router.get("/openapi.json", use: operations.openAPI)
        router.get("/v1/webpush/key", use: WebPushRoutes(api: api).key)
        if api.demo {
            let demo = DemoRoutes()
            router.get("/demo", use: demo.index)
            router.get("/demo/:file", use: demo.file)
        }
        return router
    }

    /// The operations routes only (`/healthz`, `/readyz`, `/status`, `/status.html`, `/metrics`): what a
    /// dispatcher-only process serves, so it can be probed and scraped like the API.
    public static func buildOperations(_ api: APIContext) -> Router<APIRequestContext> {
        let router = Router(context: APIRequestContext.self)
        router.add(middleware: RequestMetricsMiddleware())
        router.add(middleware: ErrorMiddleware())
        router.add(middleware: MethodNotAllowedMiddleware())
        mountOperations(router, OperationsRoutes(api: api))
        // The support lookup: on the operations listener only, and only with an operations token.
        if api.opsToken != nil, api.hasSupport {
            let support = SupportRoutes(api: api)
            router.get("/support/notifications/:id", use: support.notification)
            router.get("/support/devices/:id", use: support.device)
        }
        return router
    }

    private static func mountOperations(_ router: Router<APIRequestContext>, _ operations: OperationsRoutes) {
        router.get("/healthz", use: operations.health)
        router.get("/readyz", use: operations.ready)
        router.get("/status", use: operations.status)
        router.get("/status.html", use: operations.statusPage)
        router.get("/metrics", use: operations.metrics)
    }
}
