import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOFoundationEssentialsCompat
import SecurePushAPI
import SecurePushServer
import SecurePushTestSupport
import Testing

@Suite("HTTP API: the published contract")
struct APIContractTests {
    @Test("the router's routes and docs/openapi.json's operations are the same set")
    func routesMatchDocument() async throws {
        try await TestDatabase.with { db in
            var environment = ["DATABASE_URL": db.url.urlString]
            environment["SECUREPUSH_USER_JWT_SECRET"] = APIHarness.jwtSecret
            // With an operations listener and its token, that listener adds the support lookup.
            environment["SECUREPUSH_OPS_PORT"] = "9090"
            environment["SECUREPUSH_OPS_TOKEN"] = "contract-token-0123456789abcdef"
            let assembly = try await APIAssembly(
                client: db.client, configuration: try SecurePushConfiguration(environment: environment), logger: db.logger)
            let routes = Set(
                (APIRouter.build(assembly.context).routes + APIRouter.buildOperations(assembly.context).routes).map {
                    "\($0.method.rawValue) \($0.path)"
                })
            let documented = Set(OpenAPIDocument.operations.flatMap { path, methods in methods.map { "\($0) \(path)" } })
            #expect(
                routes == documented, "only in the router: \(routes.subtracting(documented)); only in the document: \(documented.subtracting(routes))"
            )
        }
    }

    @Test("GET /openapi.json serves the checked-in document byte for byte")
    func servesDocument() async throws {
        try await APIHarness.withDatabase { db, _, client in
            let response = try await client.execute(uri: "/openapi.json", method: .get)
            #expect(response.status == .ok)
            let checkedIn = try Data(
                contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                    .appendingPathComponent("docs/openapi.json"))
            #expect(Data(buffer: response.body) == checkedIn)
            #expect((response.body.json["openapi"] as? String) == "3.1.0")
        }
    }

    @Test("a wrong method on a known path answers 405 with Allow; an unknown path 404")
    func methodNotAllowed() async throws {
        try await APIHarness.withDatabase { db, _, client in
            let wrong = try await client.execute(uri: "/v1/devices", method: .get)
            expectError(wrong, .methodNotAllowed, "method_not_allowed")
            #expect(wrong.headers[.allow] == "POST")
            let withID = try await client.execute(uri: "/v1/notifications/\(UUID())", method: .delete)
            expectError(withID, .methodNotAllowed, "method_not_allowed")
            #expect(withID.headers[.allow] == "GET")
            expectError(try await client.execute(uri: "/v1/nothing-here", method: .get), .notFound, "not_found")
        }
    }

    @Test("the validator catches a response that breaks the contract")
    func validatorCanFail() {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        func problems(_ status: HTTPResponse.Status, _ path: String, _ body: String) -> [String] {
            OpenAPIValidator.problems(method: .get, path: path, status: status, headers: headers, body: ByteBuffer(string: body))
        }
        #expect(!problems(.ok, "/healthz", #"{"status":"ok","extra":1}"#).isEmpty, "an undocumented property")
        #expect(!problems(.init(code: 418), "/healthz", "{}").isEmpty, "an undocumented status")
        #expect(
            problems(.tooManyRequests, "/v1/notifications", #"{"error":{"code":"too_many_requests","message":"slow down"}}"#)
                .contains { $0.contains("Retry-After") }, "a documented header missing")
        #expect(!problems(.ok, "/v1/notifications", #"{"notifications":[{"id":"x","created_at":"t","read_at":5}]}"#).isEmpty, "a wrong type")
        #expect(problems(.ok, "/healthz", #"{"status":"ok"}"#).isEmpty)
    }
}
