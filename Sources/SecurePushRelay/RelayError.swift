import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The relay's refusals, as `{"error":{"code":...,"message":...}}` with the status they name. Every
/// authentication failure (unknown installation, bad signature, expired or replayed token) is the same 401.
struct RelayError: Error {
    var status: HTTPResponse.Status
    var code: String
    var message: String
    var retryAfter: Double?

    static let unauthorized = RelayError(status: .unauthorized, code: "unauthorized", message: "The request token is missing or not valid.")
    static let disabled = RelayError(status: .forbidden, code: "installation_disabled", message: "This installation is disabled.")
    static let tooLarge = RelayError(status: .contentTooLarge, code: "payload_too_large", message: "The body is larger than 1 MiB.")
    static let unavailable = RelayError(
        status: .serviceUnavailable, code: "unavailable", message: "The relay's database is unavailable; retry later.", retryAfter: 1)

    static func badRequest(_ message: String) -> RelayError { RelayError(status: .badRequest, code: "bad_request", message: message) }

    static func throttled(retryAfter: Double) -> RelayError {
        RelayError(
            status: .tooManyRequests, code: "too_many_failures", message: "Too many failed authentications from this address; retry later.",
            retryAfter: retryAfter)
    }

    static let bodyTimeout = RelayError(status: .requestTimeout, code: "request_timeout", message: "The request body did not arrive in time.")

    static func quota(retryAfter: Double, _ message: String) -> RelayError {
        RelayError(status: .tooManyRequests, code: "quota_exceeded", message: message, retryAfter: retryAfter)
    }

    var response: Response {
        var response = Self.json(["error": ["code": code, "message": message]], status: status)
        if let retryAfter {
            response.headers[.retryAfter] = String(Int(min(86_400, max(1, retryAfter.rounded(.up)))))
        }
        return response
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let bytes = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return Response(
            status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
