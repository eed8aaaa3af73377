import Foundation
import Hummingbird
import SecurePushStore

/// Route-group middleware of the device routes: parses `Authorization: Bearer <device_id>.<device_secret>`
/// into a proof and applies the read rate limits, with no database call. The read routes check the proof
/// in the same round trip as the read; the others add `DeviceCheckMiddleware` after this one. Every refusal
/// is the same 401 (429 once the client or device is throttled).
struct DeviceCredentialMiddleware: RouterMiddleware {
    let gate: DeviceGate

    func handle(_ request: Request, context: APIRequestContext, next: (Request, APIRequestContext) async throws -> Response) async throws
        -> Response
    {
        var context = context
        let (proof, charge) = try await gate.admit(request, context: context)
        context.proof = proof
        context.readCharge = charge
        return try await next(request, context)
    }
}
