import Foundation

/// An HTTP request exactly as a provider puts it on the wire (minus authorization).
public struct WireRequest: Sendable, Hashable {
    /// HTTP method.
    public var method: String
    /// Path (APNs) or full URL (FCM, WNS, Web Push).
    public var path: String
    /// Headers in order.
    public var headers: [WireHeader]
    /// The body bytes. For every platform it carries only the notification id.
    public var body: Data

    /// Creates a request.
    public init(method: String = "POST", path: String, headers: [WireHeader], body: Data) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }

    /// The first header with this (case-insensitive) name.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// One header.
public struct WireHeader: Sendable, Hashable, Codable {
    /// Header name, lowercase.
    public var name: String
    /// Header value.
    public var value: String

    /// Creates a header.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}
