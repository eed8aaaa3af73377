import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// `/demo/`: the Web kit's demo page and the kit itself (`clients/web`, embedded at build time), served
/// only when `SECUREPUSH_DEMO=on`. Same-origin only: a strict Content-Security-Policy, no caching.
struct DemoRoutes: Sendable {
    /// The embedded files by name (`index.html`, `securepush.js`, `securepush-sw.js`, ...).
    static let files: [String: (contentType: String, bytes: ByteBuffer)] = {
        var files: [String: (String, ByteBuffer)] = [:]
        for file in EmbeddedWebKit.files {
            guard let data = Data(base64Encoded: file.base64) else { preconditionFailure("\(file.name) was not embedded") }
            files[file.name] = (contentType(file.name), ByteBuffer(bytes: data))
        }
        return files
    }()

    static func contentType(_ name: String) -> String {
        if name.hasSuffix(".html") { return "text/html; charset=utf-8" }
        if name.hasSuffix(".css") { return "text/css; charset=utf-8" }
        return "text/javascript; charset=utf-8"
    }

    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src 'self'; worker-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// `/demo/` is the page; `/demo` redirects there, so the page's relative URLs resolve inside `/demo/`.
    func index(_ request: Request, context: APIRequestContext) async throws -> Response {
        guard request.uri.path.hasSuffix("/") else {
            var headers = HTTPFields()
            headers[.location] = "/demo/"
            return Response(status: .movedPermanently, headers: headers)
        }
        return try serve("index.html")
    }

    func file(_ request: Request, context: APIRequestContext) async throws -> Response {
        try serve(context.parameters.get("file") ?? "")
    }

    private func serve(_ name: String) throws -> Response {
        guard let file = Self.files[name] else {
            throw APIError(.notFound, code: .notFound, message: "No such file.")
        }
        var headers = HTTPFields()
        headers[.contentType] = file.contentType
        headers[.cacheControl] = "no-cache"
        headers[.contentSecurityPolicy] = Self.contentSecurityPolicy
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: file.bytes))
    }
}
