import Foundation
import Hummingbird
import SecurePushStore

/// What a user chooses from any of their devices (device credential): quiet hours
/// (`GET/PUT/DELETE /v1/quiet-hours`) and muted categories (`GET /v1/categories`,
/// `PUT /v1/categories/{name}`). The choice is the user's: every device of the user sees and changes it.
struct PreferenceRoutes: Sendable {
    let api: APIContext

    func quietHours(_ request: Request, context: APIRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let hours = try await api.database { try await $0.preferences.quietHours(userID: device.userID) }
        return try JSONResponse.make(QuietHoursBody(hours))
    }

    func setQuietHours(_ request: Request, context: APIRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let input = try await RequestBody.decode(
            QuietHoursBody.Window.self, request, limits: api.limits, keys: ["time_zone", "start", "end"],
            shape: #"{"time_zone": "Europe/Berlin", "start": "22:00", "end": "07:00"}"#)
        let hours = try input.validated()
        do {
            try await api.database { try await $0.preferences.setQuietHours(userID: device.userID, hours) }
        } catch let error as InvalidInput {
            throw APIError(.badRequest, code: .invalidParameter, message: error.message)
        } catch let error as HourlyLimitReached {
            throw Self.tooManyChanges(error)
        }
        return try JSONResponse.make(QuietHoursBody(hours))
    }

    func clearQuietHours(_ request: Request, context: APIRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        do {
            _ = try await api.database { try await $0.preferences.clearQuietHours(userID: device.userID) }
        } catch let error as HourlyLimitReached {
            throw Self.tooManyChanges(error)
        }
        return Response(status: .noContent)
    }

    /// 429 past the user's hourly quiet-hours changes (each re-times the user's waiting pushes).
    static func tooManyChanges(_ error: HourlyLimitReached) -> APIError {
        APIError.tooManyRequests(retryAfter: error.retryAfter, "Too many quiet-hours changes for this user; retry later.")
    }

    func categories(_ request: Request, context: APIRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let categories = try await api.database { try await $0.preferences.categories(userID: device.userID) }
        return try JSONResponse.make(CategoriesBody(categories: categories.map(CategoryBody.init)))
    }

    func setCategory(_ request: Request, context: APIRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let name = context.parameters.get("name") ?? ""
        let input = try await RequestBody.decode(MuteInput.self, request, limits: api.limits, keys: ["muted"], shape: #"{"muted": true}"#)
        do {
            _ = try await api.database { try await $0.preferences.setMuted(userID: device.userID, category: name, muted: input.muted) }
        } catch let error as InvalidInput {
            throw APIError(.badRequest, code: .invalidParameter, message: error.message)
        }
        return try JSONResponse.make(CategoryBody(name: name, muted: input.muted, latestAt: nil))
    }

    /// `{"muted": true|false}`.
    struct MuteInput: Decodable {
        var muted: Bool
    }
}
