import Dispatch
import Hummingbird
import Metrics
import NIOConcurrencyHelpers

/// Request metrics under Hummingbird's names and dimensions (`hb.requests`, `hb.request.errors`,
/// `http.server.request.duration`, `http.server.active_requests`), recorded when the handler returns.
///
/// Hummingbird's own `MetricsMiddleware` records after the body is written by wrapping the body in a closure,
/// and a closure body loses Hummingbird's single write of head, body and end: every response went out in two
/// `write` calls, the head's and the body's (issue 46's read profile: 26,000 writes in 14,000 requests).
/// Every response this API gives is one buffer already made when the handler returns, so its end is that.
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    private let cache = Cache()

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = DispatchTime.now().uptimeNanoseconds
        let active = cache.active(request.method)
        active.increment()
        defer { active.decrement() }
        do {
            let response = try await next(request, context)
            let metrics = cache.endpoint(Key(route: context.endpointPath ?? "Unknown", method: request.method, status: response.status))
            metrics.requests.increment()
            metrics.duration.recordNanoseconds(DispatchTime.now().uptimeNanoseconds - start)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
            let metrics = cache.endpoint(Key(route: context.endpointPath ?? "NotFound", method: request.method, status: status))
            metrics.requests.increment()
            metrics.errors.increment()
            throw error
        }
    }

    private struct Key: Hashable {
        let route: String
        let method: HTTPRequest.Method
        let status: HTTPResponse.Status
    }

    private struct Endpoint: Sendable {
        let requests: Counter
        let duration: Timer
        let errors: Counter

        init(_ key: Key) {
            let base = [("http.route", key.route), ("http.request.method", key.method.description)]
            let dimensions = base + [("http.response.status_code", key.status.code.description)]
            requests = Counter(label: "hb.requests", dimensions: dimensions)
            duration = Timer(label: "http.server.request.duration", dimensions: dimensions, preferredDisplayUnit: .seconds)
            errors = Counter(label: "hb.request.errors", dimensions: base + [("error.type", key.status.code.description)])
        }
    }

    /// The metric handles made so far (a factory lookup per request costs more than a dictionary's).
    private final class Cache: Sendable {
        private let endpoints = NIOLockedValueBox<[Key: Endpoint]>([:])
        private let methods = NIOLockedValueBox<[HTTPRequest.Method: Meter]>([:])

        func endpoint(_ key: Key) -> Endpoint {
            Self.handle(in: endpoints, for: key) { Endpoint(key) }
        }

        func active(_ method: HTTPRequest.Method) -> Meter {
            Self.handle(in: methods, for: method) {
                Meter(label: "http.server.active_requests", dimensions: [("http.request.method", method.description)])
            }
        }

        /// The handle made for `key`, made by `make` the first time.
        private static func handle<K: Hashable, V>(in box: NIOLockedValueBox<[K: V]>, for key: K, make: () -> V) -> V {
            box.withLockedValue { handles in
                if let known = handles[key] { return known }
                let made = make()
                handles[key] = made
                return made
            }
        }
    }
}
