import HTTPTypes
import Hummingbird

/// Cross-origin access for Web apps served from another origin (`SECUREPUSH_CORS_ORIGINS`): exact origins
/// only, on the `/v1/` routes only (never `/status`, `/metrics` or `/demo`). An allowed origin's preflight
/// is answered `204` here, and its responses (errors included) carry `Access-Control-Allow-Origin` and
/// `Vary: Origin`. Credentials are bearer headers, never cookies, so `Access-Control-Allow-Credentials` is
/// never sent. Any other origin gets no CORS header at all, and the browser refuses to hand it the answer.
///
/// Hummingbird's `CORSMiddleware` is not used: its list of origins is a variadic argument (no list from
/// configuration), and it answers every `OPTIONS` of every route.
struct CORSMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The allowed origins, as browsers send them (`https://app.example.com`, `http://localhost:8080`).
    let origins: Set<String>
    /// How long a browser may cache a preflight.
    static var maxAgeSeconds: String { "600" }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.uri.path.hasPrefix("/v1/"), let origin = request.headers[.origin], origins.contains(origin) else {
            return try await next(request, context)
        }
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            var headers = Self.headers(origin: origin)
            headers[.accessControlAllowMethods] = "GET, POST, PUT, DELETE"
            headers[.accessControlAllowHeaders] = "authorization, content-type"
            headers[.accessControlMaxAge] = Self.maxAgeSeconds
            return Response(status: .noContent, headers: headers)
        }
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            // Errors are rendered here (ErrorMiddleware, inside, has made every one an HTTPResponseError), so
            // a 4xx or 5xx reaches the page with its code instead of as an opaque network error.
            response = try error.response(from: request, context: context)
        }
        for field in Self.headers(origin: origin) { response.headers.append(field) }
        return response
    }

    /// What every answer to an allowed origin carries (`Retry-After` readable by the kit on 429 and 503).
    static func headers(origin: String) -> HTTPFields {
        [.accessControlAllowOrigin: origin, .vary: "Origin", .accessControlExposeHeaders: "Retry-After"]
    }
}
