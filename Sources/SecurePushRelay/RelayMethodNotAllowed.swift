import HTTPTypes
import Hummingbird

/// A path the relay serves asked with a method it does not have answers `405 method_not_allowed` with
/// `Allow`, instead of the router's 404 (the contract, docs/relay-openapi.json, lists one method a path).
struct RelayMethodNotAllowed<Context: RequestContext>: RouterMiddleware {
    /// The methods of each path this listener serves.
    let methods: [String: [HTTPRequest.Method]]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            guard let allowed = methods[request.uri.path], !allowed.contains(request.method) else { throw error }
            var response = RelayError(status: .methodNotAllowed, code: "method_not_allowed", message: "This method is not allowed here.").response
            response.headers[.allow] = allowed.map(\.rawValue).joined(separator: ", ")
            return response
        }
    }
}
