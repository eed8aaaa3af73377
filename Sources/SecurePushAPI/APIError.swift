import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// An API error: a status, a stable machine code and a human sentence. Its body is always
/// `{"error": {"code": ..., "message": ...}}` and never carries SQL, payloads, tokens or stack traces.
public struct APIError: Error, HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    /// Stable code clients can switch on.
    public var code: APIErrorCode
    /// One human sentence.
    public var message: String
    /// Extra headers (for example `WWW-Authenticate`).
    public var headers: HTTPFields

    /// Creates an error.
    public init(_ status: HTTPResponse.Status, code: APIErrorCode, message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.cacheControl] = "no-store"
        // Sorted keys: identical errors must be byte-identical (404s may not hint at anything).
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var body = ByteBuffer(bytes: try encoder.encode(["error": ["code": code.text, "message": message]]))
        body.writeInteger(UInt8(ascii: "\n"))
        return Response(status: status, headers: headers, body: .init(byteBuffer: body))
    }

    /// 401 with a `WWW-Authenticate` challenge.
    public static func unauthorized(_ message: String) -> APIError {
        var headers = HTTPFields()
        headers[.wwwAuthenticate] = #"Bearer realm="securepush", error="invalid_token""#
        return APIError(.unauthorized, code: .unauthorized, message: message, headers: headers)
    }

    /// 401 for a device credential that does not (or no longer) match an active device.
    public static var deviceCredentialInvalid: APIError { unauthorized("The device credential is invalid or revoked.") }

    /// 400 `invalid_device`: a registration, push address or sealing key the API or the database refused.
    public static func invalidDevice(_ message: String) -> APIError {
        APIError(.badRequest, code: .invalidDevice, message: message)
    }

    /// 429 with `Retry-After` (whole seconds, at least 1).
    public static func tooManyRequests(retryAfter seconds: Double, _ message: String) -> APIError {
        var headers = HTTPFields()
        // Clamped to 1 s ... 1 day, so a non-finite or huge figure cannot trap the conversion.
        let bounded = seconds.isFinite ? min(max(seconds, 1), 86_400) : 86_400
        headers[.retryAfter] = String(Int(bounded.rounded(.up)))
        return APIError(.tooManyRequests, code: .tooManyRequests, message: message, headers: headers)
    }

    /// 503 for a database that did not answer in time; worth retrying shortly.
    public static let unavailable: APIError = {
        var headers = HTTPFields()
        headers[.retryAfter] = "1"
        return APIError(.serviceUnavailable, code: .unavailable, message: "The service is temporarily unavailable; try again.", headers: headers)
    }()

    /// 404 for anything the caller may not know exists.
    public static let notFound = APIError(.notFound, code: .notFound, message: "No such notification.")
}
