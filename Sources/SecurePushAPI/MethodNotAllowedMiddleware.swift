import Hummingbird

/// A known path asked with a method it does not have answers `405 method_not_allowed` with `Allow`
/// (the methods the contract lists), instead of the router's 404.
struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            guard let template = OpenAPIDocument.template(for: request.uri.path),
                let methods = OpenAPIDocument.operations[template], !methods.contains(request.method.rawValue)
            else { throw error }
            var headers = HTTPFields()
            headers[.allow] = methods.sorted().joined(separator: ", ")
            throw APIError(.methodNotAllowed, code: .methodNotAllowed, message: "This method is not allowed here.", headers: headers)
        }
    }
}
