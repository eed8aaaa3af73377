import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// JSON responses with the API's conventions (snake_case keys, ISO 8601 dates with milliseconds).
enum JSONResponse {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(timestamp(date))
        }
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    static func timestamp(_ date: Date) -> String {
        Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date)
    }

    static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        raw(status, try encoder.encode(value))
    }

    static func raw(_ status: HTTPResponse.Status = .ok, _ bytes: some Sequence<UInt8>) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: Array(bytes))))
    }
}
