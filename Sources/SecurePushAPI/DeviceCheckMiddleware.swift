import Foundation
import Hummingbird
import SecurePushStore

/// Route-group middleware after `DeviceCredentialMiddleware`, for the device routes that do more than read:
/// checks the proof against the database and puts the device in the context (as hummingbird-auth separates
/// authenticating from requiring it). Without a proof in the context, the request is refused like a bad one.
struct DeviceCheckMiddleware: RouterMiddleware {
    let gate: DeviceGate

    func handle(_ request: Request, context: APIRequestContext, next: (Request, APIRequestContext) async throws -> Response) async throws
        -> Response
    {
        guard let proof = context.proof else { throw APIError.deviceCredentialInvalid }
        var context = context
        context.device = try await gate.authenticate(proof, charge: context.readCharge, logger: context.logger)
        return try await next(request, context)
    }
}
