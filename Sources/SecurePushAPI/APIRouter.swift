import Hummingbird

/// Builds the HTTP API's router.
public enum APIRouter {
    /// All routes, behind the error middleware and request metrics.
    public static func build(_ api: APIContext) -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: ErrorMiddleware())
        router.add(middleware: MetricsMiddleware())
        let devices = DeviceRoutes(api: api)
        let notifications = NotificationRoutes(api: api)
        let operations = OperationsRoutes(api: api)
        router.post("/v1/devices", use: devices.register)
        router.delete("/v1/devices/current", use: devices.unregister)
        router.get("/v1/notifications", use: notifications.list)
        router.get("/v1/notifications/:id", use: notifications.read)
        router.get("/healthz", use: operations.health)
        router.get("/readyz", use: operations.ready)
        router.get("/status", use: operations.status)
        router.get("/metrics", use: operations.metrics)
        return router
    }
}
