import Foundation
import Hummingbird
import SecurePushStore

/// `/healthz`, `/readyz`, `/status` and `/metrics`.
struct OperationsRoutes: Sendable {
    let api: APIContext

    func health(_ request: Request, context: some RequestContext) async throws -> Response {
        try JSONResponse.make(["status": "ok"])
    }

    func ready(_ request: Request, context: some RequestContext) async throws -> Response {
        do {
            let pendingMigrations = api.pendingMigrations
            let pending = try await api.database { try await pendingMigrations() }
            guard pending.isEmpty else {
                throw APIError(.serviceUnavailable, code: "not_ready", message: "Database migrations are pending: run securepush migrate.")
            }
            return try JSONResponse.make(["status": "ready"])
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError(.serviceUnavailable, code: "not_ready", message: "The database is unreachable.")
        }
    }

    func status(_ request: Request, context: some RequestContext) async throws -> Response {
        do {
            let (status, pendingMigrations) = (api.status, api.pendingMigrations)
            let report = try await api.database { try await status.report(pendingMigrations: try await pendingMigrations()) }
            let body = try StatusReport.encoder.encode(report)
            return JSONResponse.raw(.ok, body)
        } catch {
            return try JSONResponse.make(["database": ["reachable": false]], status: .serviceUnavailable)
        }
    }

    func metrics(_ request: Request, context: some RequestContext) async throws -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; version=0.0.4"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: api.metricsText())))
    }
}
