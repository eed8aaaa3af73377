import Foundation
import Hummingbird
import NIOFoundationEssentialsCompat
import SecurePushCore

/// Reading a request's body: bounded by the body size limit and the body read timeout (a slow sender gets
/// `408 request_timeout`, an oversize body `413`).
enum RequestBody {
    /// The whole body.
    static func read(_ request: Request, limits: APILimits) async throws -> Data {
        let (limit, timeout) = (limits.maxRequestBodyBytes, limits.bodyReadTimeout)
        do {
            // Joined: the abandoned read has ended before the server reads the connection again.
            return Data(buffer: try await withDeadlineJoined(timeout) { try await request.body.collect(upTo: limit) })
        } catch is DeadlineExceeded {
            throw APIError(.requestTimeout, code: .requestTimeout, message: "The request body did not arrive in time.")
        }
    }

    /// The body decoded strictly as `T` (a boolean must be `true`/`false`, a string a string), with no member
    /// but `T`'s keys: anything else is `400 invalid_json` or `invalid_parameter` showing the expected `shape`.
    static func decode<T: Decodable>(_ type: T.Type, _ request: Request, limits: APILimits, keys: Set<String>, shape: String) async throws -> T {
        let data = try await read(request, limits: limits)
        guard let names = JSONObjectKeys.names(Array(data)) else {
            throw APIError(.badRequest, code: .invalidJSON, message: "The body must be a JSON object: \(shape).")
        }
        let unknown = Set(names).subtracting(keys).sorted()
        guard unknown.isEmpty, names.count == Set(names).count, let value = try? JSONDecoder().decode(T.self, from: data) else {
            throw APIError(.badRequest, code: .invalidParameter, message: "The body must be \(shape).")
        }
        return value
    }
}
