import AsyncHTTPClient
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import SecurePushCore

/// What every HTTP provider holds: the injected client, the TLS configuration its requests carry,
/// the deadline of one request and the logger.
struct ProviderTransport: Sendable {
    /// The shared client (owned by the caller).
    let httpClient: HTTPClient
    /// Attached to every request; `nil` leaves the client's own (APNs passes one per team instead).
    let tls: TLSConfiguration?
    /// Deadline of one request, response body included.
    let timeout: Duration
    /// The provider's logger.
    let logger: Logger

    init(httpClient: HTTPClient, tls: TLSConfiguration?, timeout: Duration, logger: Logger) {
        self.httpClient = httpClient
        self.tls = tls
        self.timeout = timeout
        self.logger = logger
    }

    /// A transport trusting the system store, or only the PEM CA certificates in `caFile`. Throws when the file cannot be read.
    init(httpClient: HTTPClient, caFile: String?, timeout: Duration, logger: Logger) throws {
        self.init(httpClient: httpClient, tls: try ClientTLS.configuration(caFile: caFile), timeout: timeout, logger: logger)
    }

    /// The logger for one push, carrying its notification id and platform (never its token).
    func logger(for push: Push, platform: Platform) -> Logger {
        var logger = logger
        logger[metadataKey: "push.notification_id"] = "\(push.notificationID)"
        logger[metadataKey: "push.platform"] = "\(platform.rawValue)"
        return logger
    }

    /// POSTs `body` and collects at most `bodyLimit` bytes of the answer. Throws transport errors
    /// (see `TransportFailure`); `tls` overrides the transport's own for this request, `client` the
    /// shared client (an `EndpointGuard`'s pinned one).
    func post(
        _ url: String, headers: HTTPHeaders, body: ByteBuffer, tls: TLSConfiguration? = nil, bodyLimit: Int = 64 * 1024,
        client: HTTPClient? = nil, logger: Logger?
    ) async throws -> ProviderResponse {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.tlsConfiguration = tls ?? self.tls
        request.headers = headers
        request.body = .bytes(body)
        let response = try await (client ?? httpClient).execute(request, timeout: timeout.timeAmount, logger: logger)
        let collected = try await response.body.collect(upTo: bodyLimit)
        return ProviderResponse(status: Int(response.status.code), headers: response.headers, body: collected)
    }
}

/// A push service's answer.
struct ProviderResponse {
    /// The HTTP status code.
    var status: Int
    /// The response headers.
    var headers: HTTPHeaders
    /// The collected body.
    var body: ByteBuffer

    /// The delay a `Retry-After` header asks for.
    var retryAfter: Duration? { RetryAfter.parse(headers.first(name: "retry-after")) }
}
