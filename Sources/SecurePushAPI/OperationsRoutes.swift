import Foundation
import Hummingbird
import Logging
import SecurePushCore
import SecurePushPostgres
import SecurePushReports
import SecurePushStore

/// `/healthz`, `/readyz`, `/status` and `/metrics`.
struct OperationsRoutes: Sendable {
    let api: APIContext

    func health(_ request: Request, context: APIRequestContext) async throws -> Response {
        try JSONResponse.make(["status": "ok"])
    }

    func ready(_ request: Request, context: APIRequestContext) async throws -> Response {
        let pending: [String]
        let role: ServerRole
        do {
            (pending, role) = try await api.database { try await $0.readiness() }
        } catch let error as NoWritablePrimary {
            context.logger.warning("readiness check: no writable primary", metadata: ["db.problem": "\(error)"])
            throw APIError(
                .serviceUnavailable, code: .notReady, message: "No writable primary is reached: \(error.outcomes.joined(separator: "; ")).")
        } catch {
            context.logger.databaseError("readiness check: the database is unreachable", error)
            throw APIError(.serviceUnavailable, code: .notReady, message: "The database is unreachable.")
        }
        guard role == .primary else {
            context.logger.warning("readiness check: the database is not a writable primary", metadata: ["db.role": "\(role.rawValue)"])
            throw APIError(.serviceUnavailable, code: .notReady, message: "The database is a \(role.rawValue) server, not a writable primary.")
        }
        guard pending.isEmpty else {
            context.logger.warning("readiness check: migrations are pending", metadata: ["db.pending": "\(pending.joined(separator: ","))"])
            throw APIError(.serviceUnavailable, code: .notReady, message: "Database migrations are pending: run securepush migrate.")
        }
        return try JSONResponse.make(["status": "ready"])
    }

    /// `GET /status`: the report as JSON, or as the page when the client prefers `text/html` (a browser).
    func status(_ request: Request, context: APIRequestContext) async throws -> Response {
        try await report(html: Self.prefersHTML(request.headers[.accept]), context: context)
    }

    /// `GET /status.html`: the report as the page.
    func statusPage(_ request: Request, context: APIRequestContext) async throws -> Response {
        try await report(html: true, context: context)
    }

    private func report(html: Bool, context: APIRequestContext) async throws -> Response {
        let report: StatusReport
        do {
            report = try await api.database { try await $0.status.report(pendingMigrations: try await $0.pendingMigrations()) }
        } catch {
            context.logger.databaseError("status report: the database is unreachable", error)
            if html { return Self.page(StatusPage.unreachable(at: Date()), status: .serviceUnavailable) }
            return try JSONResponse.make(["database": ["reachable": false]], status: .serviceUnavailable)
        }
        if html { return Self.page(StatusPage.render(report), status: .ok) }
        return JSONResponse.raw(.ok, try StatusReport.jsonEncoder.encode(report))
    }

    private static func page(_ html: String, status: HTTPResponse.Status) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.contentSecurityPolicy] = StatusPage.contentSecurityPolicy
        headers[.cacheControl] = "no-store"
        headers[.xContentTypeOptions] = "nosniff"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// True when `text/html` has a higher quality in `Accept` than `application/json`, each taken from its
    /// most specific range (`text/html`, else `text/*`, else `*/*`); a tie, `*/*` and no header give JSON.
    static func prefersHTML(_ accept: String?) -> Bool {
        guard let accept else { return false }
        var qualities: [String: Double] = [:]
        for range in accept.split(separator: ",") {
            let parts = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let type = parts.first, !type.isEmpty else { continue }
            let quality = parts.dropFirst().compactMap { $0.hasPrefix("q=") ? Double($0.dropFirst(2)) : nil }.first ?? 1
            qualities[type] = max(qualities[type] ?? 0, quality)
        }
        func quality(_ type: String, _ family: String) -> Double {
            qualities[type] ?? qualities[family] ?? qualities["*/*"] ?? 0
        }
        return quality("text/html", "text/*") > quality("application/json", "application/*")
    }

    func metrics(_ request: Request, context: APIRequestContext) async throws -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; version=0.0.4"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: api.metricsText())))
    }

    func openAPI(_ request: Request, context: APIRequestContext) async throws -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: OpenAPIDocument.data)))
    }
}
