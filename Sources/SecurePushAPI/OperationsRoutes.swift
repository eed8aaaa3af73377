import Foundation
import Hummingbird
import SecurePushStore

/// `/healthz`, `/readyz`, `/status` and `/metrics`.
struct OperationsRoutes: Sendable {
    let api: APIContext

    func health(_ request: Request, context: APIRequestContext) async throws -> Response {
        try JSONResponse.make(["status": "ok"])
    }

    func ready(_ request: Request, context: APIRequestContext) async throws -> Response {
        let pending: [String]
        do {
            pending = try await api.database { try await $0.pendingMigrations() }
        } catch {
            context.logger.databaseError("readiness check: the database is unreachable", error)
            throw APIError(.serviceUnavailable, code: "not_ready", message: "The database is unreachable.")
        }
        guard pending.isEmpty else {
            context.logger.warning("readiness check: migrations are pending", metadata: ["db.pending": "\(pending.joined(separator: ","))"])
            throw APIError(.serviceUnavailable, code: "not_ready", message: "Database migrations are pending: run securepush migrate.")
        }
        return try JSONResponse.make(["status": "ready"])
    }

    func status(_ request: Request, context: APIRequestContext) async throws -> Response {
        let report: StatusReport
        do {
            report = try await api.database { try await $0.status.report(pendingMigrations: try await $0.pendingMigrations()) }
        } catch {
            context.logger.databaseError("status report: the database is unreachable", error)
            return try JSONResponse.make(["database": ["reachable": false]], status: .serviceUnavailable)
        }
        return JSONResponse.raw(.ok, try StatusReport.encoder.encode(report))
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
