import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import SecurePushCore
import SecurePushFakes
import SecurePushProviders
import SecurePushTestSupport

/// Helpers shared by the provider tests.
enum TestSupport {
    static let logger: Logger = {
        var logger = Logger(label: "securepush.provider-tests")
        logger.logLevel = .critical
        return logger
    }()

    /// A client configured as the server configures it: HTTP/2 when ALPN offers it, never following redirects.
    static func makeHTTPClient() -> HTTPClient {
        HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
    }

    static var clientConfiguration: HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.httpVersion = .automatic
        configuration.timeout.connect = .seconds(5)
        return configuration
    }

    /// Runs `body` with a fresh client and pinned clients (for Web Push and WNS), shutting both down afterwards.
    static func withClients<T>(_ body: (HTTPClient, PinnedHTTPClients) async throws -> T) async throws -> T {
        let pinned = PinnedHTTPClients(configuration: clientConfiguration, capacity: 8)
        do {
            let value = try await withHTTPClient { try await body($0, pinned) }
            await pinned.shutdown()
            return value
        } catch {
            await pinned.shutdown()
            throw error
        }
    }

    /// The loopback block the fakes live in, allowed as a private network in tests.
    static let loopback = [IPNetwork("127.0.0.0/8")!]

    /// Runs `body` with a fresh client and shuts the client down afterwards.
    static func withHTTPClient<T>(_ body: (HTTPClient) async throws -> T) async throws -> T {
        let client = makeHTTPClient()
        do {
            let value = try await body(client)
            try await client.shutdown()
            return value
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    static func push(token: String, platform: Platform = .apns, options: [String: String] = [:], ttl: TimeInterval = 3600) -> Push {
        Push(
            notificationID: NotificationID(UUID()),
            target: PushTarget(deviceID: UUID(), platform: platform, token: token, options: options),
            expiresAt: Date().addingTimeInterval(ttl)
        )
    }

    /// Sends `count` pushes through `provider` all at once, the one numbered `index` made by `push(index)`, and
    /// returns the results in the order they came back.
    static func sendConcurrently(
        _ count: Int, through provider: some PushProvider, _ push: @escaping @Sendable (_ index: Int) -> Push
    ) async -> [PushResult] {
        await withTaskGroup(of: PushResult.self) { group in
            for index in 0..<count {
                group.addTask { await provider.send(push(index)) }
            }
            return await group.reduce(into: [PushResult]()) { $0.append($1) }
        }
    }

    static func randomHexToken(bytes: Int = 32) -> String {
        hexToken(bytes: bytes)
    }

    /// A temporary file with `contents`.
    static func temporaryFile(_ contents: String, suffix: String = "") throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("securepush-\(UUID().uuidString)\(suffix)").path
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}

/// The PyPI packages installed by `ops/python-tools`, used to cross-check against independent implementations.
enum PythonTools {
    /// ops/test installs the tools and sets SECUREPUSH_REQUIRE_CROSS_CHECKS=1: then a missing tool fails the
    /// cross-checks instead of skipping them.
    static let required = ProcessInfo.processInfo.environment["SECUREPUSH_REQUIRE_CROSS_CHECKS"] == "1"

    /// The interpreter: `SECUREPUSH_PYTHON` (ops/test sets it), else the repository's `.venv` that
    /// ops/python-tools makes, else `python3` on the PATH.
    static let interpreter: (program: String, arguments: [String]) = {
        if let path = ProcessInfo.processInfo.environment["SECUREPUSH_PYTHON"], !path.isEmpty { return (path, []) }
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let venv = repository.appendingPathComponent(".venv/bin/python3").path
        if FileManager.default.isExecutableFile(atPath: venv) { return (venv, []) }
        return ("/usr/bin/env", ["python3"])
    }()

    static let available: Bool = {
        required || (try? Shell.capture(interpreter.program, interpreter.arguments + ["-c", "import jwt, http_ece, cryptography"]).status) == 0
    }()

    static let aioapnsAvailable: Bool = {
        guard available else { return false }
        if required { return true }
        return (try? Shell.capture(interpreter.program, interpreter.arguments + ["-c", "import aioapns"]).status) == 0
    }()

    /// Runs a Python script and returns its stdout; throws with stderr on failure.
    static func run(_ script: String, _ arguments: [String] = []) throws -> String {
        try Shell.run(interpreter.program, interpreter.arguments + ["-c", script] + arguments).stdout
    }
}

extension PushResult {
    /// The case name, for comparisons that ignore reasons.
    var kind: String {
        switch self {
        case .sent: "sent"
        case .retry: "retry"
        case .tokenInvalid: "tokenInvalid"
        case .failed: "failed"
        }
    }

    var reason: String {
        switch self {
        case .sent(let id): id ?? ""
        case .retry(_, let reason, _), .tokenInvalid(let reason), .failed(let reason): reason
        }
    }

    var retryAfter: Duration? {
        if case .retry(let after, _, _) = self { return after }
        return nil
    }

    /// Whose failure a retry is; `nil` for other results.
    var scope: FailureScope? {
        if case .retry(_, _, let scope) = self { return scope }
        return nil
    }
}
