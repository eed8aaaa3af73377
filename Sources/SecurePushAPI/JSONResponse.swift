import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SecurePushCore

/// JSON responses with the API's conventions (snake_case keys, dates as `APITimestamp` writes them).
enum JSONResponse {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = APITimestamp.encodingStrategy
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        raw(status, try encoder.encode(value))
    }

    /// A JSON answer of `bytes`, ending with a newline (so `curl` output ends its line and JSON-lines tools
    /// read it).
    static func raw(_ status: HTTPResponse.Status = .ok, _ bytes: some Sequence<UInt8>) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.cacheControl] = "no-store"
        var buffer = ByteBuffer(bytes: Array(bytes))
        buffer.writeInteger(UInt8(ascii: "\n"))
        return Response(status: status, headers: headers, body: .init(byteBuffer: buffer))
    }
}
