import Foundation
import Hummingbird
import Logging
import NIOHTTP1
import SecurePushCore
import SecurePushPostgres
import SecurePushStore

/// Turns every error into the API's error shape: framework errors keep their status with a stable code,
/// anything unexpected becomes a generic 500 (logged without details that could hold user data).
public struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Creates the middleware.
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as any HTTPResponseError {
            throw Self.translate(status: error.status)
        } catch is HTTPParserError {
            // A malformed request part that arrived after the head (a chunk size that overflows, a bad
            // chunk or trailer): the client's fault.
            throw APIError(.badRequest, code: .badRequest, message: "The request is malformed.")
        } catch is DeadlineExceeded {
            context.logger.error("request timed out waiting for the database")
            throw APIError.unavailable
        } catch is CancellationError {
            // Work given up on (a shutdown, a shared statement ended early): the request may be retried.
            context.logger.warning("request cancelled before it finished")
            throw APIError.unavailable
        } catch  where DatabaseErrorSummary.isUnavailable(error) {
            context.logger.databaseError("request failed: the database is unavailable", error, level: .error)
            throw APIError.unavailable
        } catch {
            context.logger.error("request failed", metadata: ["error.type": "\(type(of: error))"])
            throw APIError(.internalServerError, code: .internalError, message: "Something went wrong on our side; try again later.")
        }
    }

    static func translate(status: HTTPResponse.Status) -> APIError {
        switch status {
        case .notFound: APIError(.notFound, code: .notFound, message: "No such resource.")
        case .methodNotAllowed: APIError(.methodNotAllowed, code: .methodNotAllowed, message: "This method is not allowed here.")
        case .contentTooLarge: APIError(.contentTooLarge, code: .payloadTooLarge, message: "The request body is too large.")
        case .badRequest: APIError(.badRequest, code: .badRequest, message: "The request is malformed.")
        case .unauthorized: APIError.unauthorized("Authentication is required.")
        default:
            APIError(status, code: .http(status: status.code), message: status.reasonPhrase.isEmpty ? "Request failed." : status.reasonPhrase + ".")
        }
    }
}
