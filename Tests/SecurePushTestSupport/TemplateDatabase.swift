import Foundation
import Logging
import PostgresNIO
import SecurePushServer
import SecurePushStore

/// Creates per-test databases from one migrated template per test process.
actor TemplateDatabase {
    static let shared = TemplateDatabase()

    private var template: Task<String, any Error>?
    private let logger = Logger(label: "securepush.test.template")

    private func serverURL() throws -> DatabaseURL {
        guard let raw = ProcessInfo.processInfo.environment["DATABASE_URL"], !raw.isEmpty else {
            throw TestFailure("DATABASE_URL is not set: run the tests with ops/test, which starts a private PostgreSQL")
        }
        return try DatabaseURL(raw)
    }

    func createDatabase() async throws -> DatabaseURL {
        let template = try await ensureTemplate()
        let name = "sp_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        // The template may still show a closing connection for a moment: retry while it is "being accessed".
        var attempt = 0
        while true {
            do {
                try await admin { client in
                    try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name) TEMPLATE \(template)"), logger: self.logger)
                }
                break
            } catch {
                attempt += 1
                if attempt >= 100 { throw error }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        var url = try serverURL()
        url.database = name
        return url
    }

    func dropDatabase(_ name: String) async throws {
        try await admin { client in
            try await client.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: self.logger)
        }
    }

    private func ensureTemplate() async throws -> String {
        if let template { return try await template.value }
        let task = Task { try await self.makeTemplate() }
        template = task
        return try await task.value
    }

    private func makeTemplate() async throws -> String {
        let name = "sp_template_\(ProcessInfo.processInfo.processIdentifier)"
        try await admin { client in
            try await client.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: self.logger)
            try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: self.logger)
        }
        var url = try serverURL()
        url.database = name
        let client = url.makeClient(poolSize: 2, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            try await Migrator(migrations: try Migration.bundled()).migrate(client: client, logger: self.logger)
        }
        return name
    }

    private func admin(_ body: @Sendable (PostgresClient) async throws -> Void) async throws {
        var url = try serverURL()
        url.database = "postgres"
        let client = url.makeClient(poolSize: 2, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            try await body(client)
        }
    }
}
