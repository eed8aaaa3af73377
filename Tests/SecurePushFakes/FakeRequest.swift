import Foundation

/// One request as a fake server received it.
public struct FakeRequest: Sendable {
    /// Which TCP connection carried it (numbered from 1 per server).
    public var connectionID: Int
    /// 2 for HTTP/2, 1 for HTTP/1.x.
    public var httpMajorVersion: Int
    /// HTTP method.
    public var method: String
    /// Path and query (`:path`).
    public var path: String
    /// Headers in arrival order, names lowercased.
    public var headers: [(name: String, value: String)]
    /// The body bytes.
    public var body: Data

    /// Creates a request record.
    public init(connectionID: Int, httpMajorVersion: Int, method: String, path: String, headers: [(name: String, value: String)], body: Data) {
        self.connectionID = connectionID
        self.httpMajorVersion = httpMajorVersion
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }

    /// The first value of a header (case-insensitive).
    public func header(_ name: String) -> String? {
        let name = name.lowercased()
        return headers.first { $0.name == name }?.value
    }

    /// How many times a header occurs.
    public func count(of name: String) -> Int {
        let name = name.lowercased()
        return headers.filter { $0.name == name }.count
    }
}

/// What a fake server does with a request.
public enum FakeReply: Sendable {
    /// Answer with a status, headers and body.
    case response(status: Int, headers: [(String, String)], body: Data)
    /// Never answer (the stream or connection stays open until the client gives up).
    case stall

    /// A JSON answer.
    public static func json(_ status: Int, _ object: [String: any Sendable], headers: [(String, String)] = []) -> FakeReply {
        let body = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return .response(status: status, headers: [("content-type", "application/json")] + headers, body: body)
    }

    /// An answer without a body.
    public static func status(_ status: Int, headers: [(String, String)] = []) -> FakeReply {
        .response(status: status, headers: headers, body: Data())
    }
}
