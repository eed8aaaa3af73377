import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import Testing
import _ConnectionPoolModule

@testable import SecurePushAPI
@testable import SecurePushCore
@testable import SecurePushPostgres
@testable import SecurePushStore

/// How errors become responses: `ErrorMiddleware`, called directly with a hand-made request and context
/// (the target has no `HummingbirdTesting`), and `APIError`'s JSON body.
@Suite("Error mapping")
struct ErrorMappingTests {
    struct TestSource: RequestContextSource {
        var logger = Logger(label: "ErrorMappingTests", factory: { _ in SwiftLogNoOpLogHandler() })
    }

    struct Context: RequestContext {
        typealias Source = TestSource
        var coreContext: CoreRequestContextStorage
        init(source: TestSource) { coreContext = .init(source: source) }
    }

    actor Sink {
        var bytes: [UInt8] = []
        func append(_ buffer: ByteBuffer) { bytes += buffer.readableBytesView }
    }

    struct Collector: ResponseBodyWriter {
        let sink: Sink
        mutating func write(_ buffer: ByteBuffer) async throws { await sink.append(buffer) }
        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }

    static func request(_ method: HTTPRequest.Method = .get, _ path: String = "/v1/notifications") -> Request {
        Request(head: HTTPRequest(method: method, scheme: "http", authority: "localhost", path: path), body: .init(buffer: ByteBuffer()))
    }

    /// The `APIError` `ErrorMiddleware` turns `error` into.
    static func mapped(_ error: any Error) async -> APIError? {
        do {
            _ = try await ErrorMiddleware<Context>().handle(request(), context: Context(source: TestSource())) { _, _ in throw error }
            Issue.record("no error came out for \(error)")
            return nil
        } catch let error as APIError {
            return error
        } catch {
            Issue.record("not an APIError: \(error)")
            return nil
        }
    }

    /// The response an `APIError` writes, with its body as text.
    static func render(_ error: APIError) async throws -> (response: Response, body: String) {
        let response = try error.response(from: request(), context: Context(source: TestSource()))
        let sink = Sink()
        try await response.body.write(Collector(sink: sink))
        return (response, String(decoding: await sink.bytes, as: UTF8.self))
    }

    @Test("a response passes through; an APIError is kept as it is")
    func passThrough() async throws {
        let response = try await ErrorMiddleware<Context>().handle(Self.request(), context: Context(source: TestSource())) { _, _ in
            Response(status: .accepted)
        }
        #expect(response.status == .accepted)
        let original = APIError.tooManyRequests(retryAfter: 3, "Slow down.")
        let error = await Self.mapped(original)
        #expect(error?.status == .tooManyRequests)
        #expect(error?.code == .tooManyRequests)
        #expect(error?.message == "Slow down.")
        #expect(error?.headers[.retryAfter] == "3")
    }

    @Test("the framework's HTTP errors keep their status with a stable code")
    func frameworkErrors() async {
        let cases: [(HTTPResponse.Status, APIErrorCode, String)] = [
            (.notFound, .notFound, "No such resource."), (.methodNotAllowed, .methodNotAllowed, "This method is not allowed here."),
            (.contentTooLarge, .payloadTooLarge, "The request body is too large."), (.badRequest, .badRequest, "The request is malformed."),
            (.unauthorized, .unauthorized, "Authentication is required."), (.gone, .http(status: 410), "Gone."),
            (.tooManyRequests, .http(status: 429), "Too Many Requests."),
            (HTTPResponse.Status(code: 599), .http(status: 599), "Request failed."),
        ]
        for (status, code, message) in cases {
            let error = await Self.mapped(HTTPError(status, message: "framework detail"))
            #expect(error?.status.code == status.code, "\(status)")
            #expect(error?.code == code, "\(status)")
            #expect(error?.message == message, "\(status)")
        }
        #expect(await Self.mapped(HTTPError(.unauthorized))?.headers[.wwwAuthenticate] == #"Bearer realm="securepush", error="invalid_token""#)
        #expect(await Self.mapped(NIOTooManyBytesError(maxBytes: 10))?.code == .payloadTooLarge)
        let parser = await Self.mapped(HTTPParserError.invalidChunkSize)
        #expect(parser?.status == .badRequest)
        #expect(parser?.code == .badRequest)
    }

    @Test("an unavailable database, a database deadline or work cancelled is 503 unavailable with Retry-After: 1")
    func unavailable() async {
        let errors: [any Error] = [
            DeadlineExceeded(timeout: .seconds(10)), NoWritablePrimary(outcomes: ["db1:5432 standby", "db2:5432 unreachable"]),
            ConnectionPoolError.poolShutdown, ConnectionPoolError.connectionCreationCircuitBreakerTripped, CancellationError(),
        ]
        for underlying in errors {
            let error = await Self.mapped(underlying)
            #expect(error?.status == .serviceUnavailable, "\(underlying)")
            #expect(error?.code == .unavailable, "\(underlying)")
            #expect(error?.headers[.retryAfter] == "1", "\(underlying)")
        }
        #expect(DatabaseErrorSummary.isUnavailable(NoWritablePrimary(outcomes: [])))
        #expect(DatabaseErrorSummary.isUnavailable(ConnectionPoolError.requestCancelled))
        #expect(!DatabaseErrorSummary.isUnavailable(CancellationError()))
    }

    struct Leaky: Error, CustomStringConvertible {
        var description: String { "token=secret-value SELECT * FROM notifications" }
    }

    @Test("anything else is a generic 500 internal_error that says nothing of the error")
    func unexpected() async throws {
        for underlying in [Leaky()] as [any Error] {
            let error = try #require(await Self.mapped(underlying))
            #expect(error.status == .internalServerError)
            #expect(error.code == .internalError)
            #expect(error.message == "Something went wrong on our side; try again later.")
            #expect(error.headers[.retryAfter] == nil)
        }
    }

    @Test("an APIError is written as sorted, stable JSON ending with a newline, with no-store and its own headers")
    func body() async throws {
        let (response, body) = try await Self.render(APIError(.badRequest, code: .invalidCursor, message: "Bad \"cursor\"."))
        #expect(response.status == .badRequest)
        #expect(body == #"{"error":{"code":"invalid_cursor","message":"Bad \"cursor\"."}}"# + "\n")
        #expect(response.headers[.contentType] == "application/json; charset=utf-8")
        #expect(response.headers[.cacheControl] == "no-store")
        let (unavailable, unavailableBody) = try await Self.render(.unavailable)
        #expect(unavailable.status == .serviceUnavailable)
        #expect(unavailable.headers[.retryAfter] == "1")
        #expect(unavailableBody == #"{"error":{"code":"unavailable","message":"The service is temporarily unavailable; try again."}}"# + "\n")
        let (unauthorized, _) = try await Self.render(.unauthorized("No."))
        #expect(unauthorized.headers[.wwwAuthenticate] == #"Bearer realm="securepush", error="invalid_token""#)
    }

    @Test("a known path asked with another method is 405 method_not_allowed with Allow; an unknown path stays 404")
    func methodNotAllowed() async throws {
        func run(_ method: HTTPRequest.Method, _ path: String) async -> (any Error)? {
            do {
                _ = try await MethodNotAllowedMiddleware<Context>().handle(Self.request(method, path), context: Context(source: TestSource())) {
                    _, _ in
                    throw HTTPError(.notFound)
                }
                return nil
            } catch { return error }
        }
        let wrong = await run(.delete, "/v1/notifications/0f8fad5b-d9cb-469f-a165-70867728950e") as? APIError
        #expect(wrong?.status == .methodNotAllowed)
        #expect(wrong?.code == .methodNotAllowed)
        #expect(wrong?.headers[.allow] == "GET")
        #expect((await run(.get, "/v1/notifications/fetch") as? APIError)?.headers[.allow] == "POST")
        #expect((await run(.get, "/v1/nothing-here") as? HTTPError)?.status == .notFound)
        #expect((await run(.get, "/v1/notifications") as? HTTPError)?.status == .notFound)
    }
}
