import Foundation
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import SecurePushCore
import SecurePushStore

/// What every device-credential route shares: the credential parsed into a `DeviceProof` (no database
/// call), the read rate limits per device and per user, and the answer to a refused credential (401, or
/// 429 while throttled, with the failure recorded). The database checks the proof in the same round trip
/// as the route's own work (`DeviceAccess`).
///
/// A request takes its device's (and, when known, its user's) read token up front, so concurrent requests
/// cannot all pass a bucket that holds one token (32 connections read 3× the per-user rate when tokens were
/// taken only after the read). The tokens are given back when the database refuses the credential, so
/// requests with a victim's device id and a wrong secret do not spend its allowance.
struct DeviceGate: Sendable {
    let api: APIContext
    let deviceReads: RateLimiter
    let userReads: RateLimiter
    /// The user of each device seen lately, so the per-user limit applies before the database is asked.
    let owners: DeviceOwners

    init(api: APIContext) {
        self.api = api
        self.deviceReads = RateLimiter(api.limits.deviceReads)
        self.userReads = RateLimiter(api.limits.userReads)
        self.owners = DeviceOwners()
    }

    /// The request's proof, after the rate limits of its device and (when known) its user: 429 when either
    /// is spent. A missing or malformed credential is a failed attempt (throttled per client address).
    func admit(_ request: Request, context: APIRequestContext) async throws -> (DeviceProof, ReadCharge) {
        let client = context.clientAddress(request, trustedProxies: api.limits.trustedProxies)
        guard let credential = DeviceCredential(authorization: request.headers[.authorization]) else {
            try await AuthThrottle(api: api).reject(
                keys: AuthThrottle.keys(client: client), kind: "device credential missing or malformed",
                unauthorized: .unauthorized("A device credential is required: Authorization: Bearer <device_id>.<device_secret>."),
                logger: context.logger)
        }
        let deviceID = credential.deviceID
        let deviceKey = deviceID.uuidString
        let user = owners[deviceID]
        if let wait = deviceReads.take(deviceKey) {
            throw Self.slowDown(wait)
        }
        if let user, let wait = userReads.take(user) {
            deviceReads.refund(deviceKey)
            throw Self.slowDown(wait)
        }
        let proof = DeviceProof(deviceID: deviceID, secret: credential.secret, throttleKeys: AuthThrottle.keys(client: client, deviceID: deviceID))
        return (proof, ReadCharge(deviceKey: deviceKey, user: user))
    }

    private static func slowDown(_ wait: Duration) -> APIError {
        APIError.tooManyRequests(retryAfter: wait.secondsDouble, "Too many requests for this device or user; slow down.")
    }

    /// The device and the value of a granted access; a refused one answers 429 while a throttle key is
    /// blocked, else records the failure and answers 401 (or 429 when that failure started a block).
    private func resolve<Value>(
        _ access: DeviceAccess<Value>, proof: DeviceProof, charge: ReadCharge?, logger: Logger
    ) async throws -> (AuthenticatedDevice, Value) {
        switch access {
        case .granted(let device, let value):
            // A device seen for the first time (or moved to another user) is charged to its user now.
            if charge?.user != device.userID {
                _ = userReads.take(device.userID)
                if let previous = charge?.user { userReads.refund(previous) }
            }
            owners.remember(device)
            return (device, value)
        case .refused(let blockedFor):
            if let charge {
                deviceReads.refund(charge.deviceKey)
                if let user = charge.user { userReads.refund(user) }
            }
            let throttle = AuthThrottle(api: api)
            try throttle.refuseIfBlocked(blockedFor)
            try await throttle.fail(
                keys: proof.throttleKeys, deviceID: proof.deviceID, kind: "device credential invalid",
                unauthorized: .deviceCredentialInvalid, logger: logger)
        }
    }

    /// The whole of a device read, the one ritual the read routes share: the request's proof, its input from `parse`
    /// (a bad credential is answered before bad input), the store's `read` of that input (which checks the credential
    /// in the same statement, under the API's database deadline), and the granted value, or 401/429.
    func read<Input: Sendable, Value: Sendable>(
        context: APIRequestContext,
        input parse: () async throws -> Input,
        _ read: @escaping @Sendable (APIStores, DeviceProof, Input) async throws -> DeviceAccess<Value>
    ) async throws -> (input: Input, value: Value) {
        let proof = try context.requireProof()
        let input = try await self.input(proof, charge: context.readCharge, logger: context.logger, parse)
        let access = try await api.database { try await read($0, proof, input) }
        let (_, value) = try await resolve(access, proof: proof, charge: context.readCharge, logger: context.logger)
        return (input, value)
    }

    /// The request's input from `parse`; when it is invalid, the credential is checked first, so a bad
    /// credential is answered 401 before a bad parameter is answered 400.
    private func input<Input>(
        _ proof: DeviceProof, charge: ReadCharge?, logger: Logger, _ parse: () async throws -> Input
    ) async throws -> Input {
        do {
            return try await parse()
        } catch {
            _ = try await authenticate(proof, charge: charge, logger: logger)
            throw error
        }
    }

    /// Checks the proof on its own: for routes that do more than read, and under `input` for requests
    /// whose input is invalid.
    func authenticate(_ proof: DeviceProof, charge: ReadCharge?, logger: Logger) async throws -> AuthenticatedDevice {
        let access = try await api.database { try await $0.devices.authenticate(proof) }
        return try await resolve(access, proof: proof, charge: charge, logger: logger).0
    }
}

/// The read tokens a request took when it was admitted: its device's, and its user's when the device was
/// known. Given back when the credential is refused.
struct ReadCharge: Sendable {
    var deviceKey: String
    var user: String?
}

/// Which user each recently seen device belongs to (bounded: forgotten wholesale past 10,000 devices).
final class DeviceOwners: Sendable {
    private let owners = NIOLockedValueBox<[UUID: String]>([:])
    private static let limit = 10_000

    subscript(deviceID: UUID) -> String? {
        owners.withLockedValue { $0[deviceID] }
    }

    /// Records the device's user.
    func remember(_ device: AuthenticatedDevice) {
        owners.withLockedValue { owners in
            if owners[device.deviceID] == device.userID { return }
            if owners.count >= Self.limit { owners.removeAll(keepingCapacity: true) }
            owners[device.deviceID] = device.userID
        }
    }
}
